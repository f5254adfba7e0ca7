import CordisTestKit
import Foundation
import Testing

/// A test process killed with SIGKILL leaves no node behind: its nodes die with it.
@Suite("CordisTestKit: no orphans")
struct OrphanTests {
    @Test("Killing a test process with SIGKILL ends every node it started")
    func killedTestProcessLeavesNoNode() async throws {
        let folder = try TestFolder()
        defer { folder.remove() }
        let probe = try NodeProcess(
            name: "probe", arguments: ["3"], directory: folder.url,
            executable: NodeExecutable.product("cordis-testkit-probe").url)
        let ready = await probe.waitUntil("ready", timeout: .seconds(120)) { $0.contains("ready\n") || $0.contains("error:") }
        try #require(ready && probe.text.contains("ready"), "\(probe.text)")
        let pids = probe.text.split(separator: "\n").compactMap { line -> pid_t? in
            let fields = line.split(separator: " ")
            return fields.count == 3 && fields[0] == "node" ? pid_t(fields[2]) : nil
        }
        try #require(pids.count == 3, "\(probe.text)")
        for pid in pids { #expect(kill(pid, 0) == 0, "node \(pid) is not running") }

        probe.signal(SIGKILL)
        _ = await probe.exitCode(timeout: .seconds(20))
        // The nodes are the probe's children, not ours: the kernel tells when each ends (a pidfd).
        var alive: [pid_t] = []
        for pid in pids {
            let ended = await ProcessExit.wait(for: pid, within: .seconds(20))
            if !ended { alive.append(pid) }
        }
        #expect(alive.isEmpty, "nodes \(alive) outlived the killed test process")
        for pid in alive { kill(pid, SIGKILL) }
        // Nothing was left to remove the killed process's cluster folder: this test does.
        let folders = probe.text.split(separator: "\n").filter { $0.hasPrefix("folder /tmp/cn-") }.map { String($0.dropFirst("folder ".count)) }
        for path in folders { try? FileManager.default.removeItem(atPath: path) }
    }
}
