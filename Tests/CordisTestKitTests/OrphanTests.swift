import CordisTestKit
import Foundation
import Testing

/// A test process killed with SIGKILL leaves no node behind: its nodes die with it.
@Suite("CordisTestKit: no orphans")
struct OrphanTests {
    @Test("Killing a test process with SIGKILL ends every node it started, and its etcd in etcd mode", arguments: [false, true])
    func killedTestProcessLeavesNoNode(etcd: Bool) async throws {
        if etcd, !EtcdServer.isInstalled { return }
        let folder = try TestFolder()
        defer { folder.remove() }
        let probe = try NodeProcess(
            name: "probe", arguments: ["3"] + (etcd ? ["etcd"] : []), directory: folder.url,
            executable: NodeExecutable.product("cordis-testkit-probe").url)
        let ready = await probe.waitUntil("ready", timeout: .seconds(120)) { $0.contains("ready\n") || $0.contains("error:") }
        try #require(ready && probe.text.contains("ready"), "\(probe.text)")
        func pids(_ kind: String) -> [pid_t] {
            probe.text.split(separator: "\n").compactMap { line -> pid_t? in
                let fields = line.split(separator: " ")
                return fields.count == 3 && fields[0] == kind ? pid_t(fields[2]) : nil
            }
        }
        let nodes = pids("node")
        let servers = pids("etcd")
        try #require(nodes.count == 3, "\(probe.text)")
        try #require(servers.count == (etcd ? 1 : 0), "\(probe.text)")
        for pid in nodes + servers { #expect(kill(pid, 0) == 0, "\(pid) is not running") }

        probe.signal(SIGKILL)
        _ = await probe.exitCode(timeout: .seconds(20))
        // The nodes and etcd are the probe's children, not ours: the kernel tells when each ends (a pidfd).
        var alive: [pid_t] = []
        for pid in nodes + servers {
            let ended = await ProcessExit.wait(for: pid, within: .seconds(20))
            if !ended { alive.append(pid) }
        }
        #expect(alive.isEmpty, "processes \(alive) outlived the killed test process")
        for pid in alive { kill(pid, SIGKILL) }
        // Nothing was left to remove the killed process's cluster folder: this test does.
        let folders = probe.text.split(separator: "\n").filter { $0.hasPrefix("folder /tmp/cn-") }.map { String($0.dropFirst("folder ".count)) }
        for path in folders { try? FileManager.default.removeItem(atPath: path) }
    }
}
