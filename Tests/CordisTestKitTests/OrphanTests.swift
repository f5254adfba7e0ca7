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
        // The nodes are the probe's children, not ours: their end is read from /proc, every 20 ms, with a deadline.
        let deadline = ContinuousClock.now + .seconds(20)
        var alive = pids
        while !alive.isEmpty, ContinuousClock.now < deadline {
            alive = alive.filter(Self.isAlive)
            if !alive.isEmpty { try await Task.sleep(for: .milliseconds(20)) }
        }
        #expect(alive.isEmpty, "nodes \(alive) outlived the killed test process")
        for pid in alive { kill(pid, SIGKILL) }
    }

    /// Whether `pid` runs (a zombie waiting for its new parent to reap it has ended).
    static func isAlive(_ pid: pid_t) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")")
        else { return false }
        let state = stat[stat.index(after: close)...].trimmingCharacters(in: .whitespaces).first
        return state != "Z" && state != "X"
    }
}
