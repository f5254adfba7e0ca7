import CordisProcessTesting
import Foundation
import Testing

/// `cordis-console --discovery etcd:URL members` reads the members and their services straight from etcd.
@Suite("Console: listing the cluster from etcd", .enabled(if: EtcdServer.isInstalled))
struct ConsoleDiscoveryTests {
    @Test("members with --discovery lists each node and its services from etcd, even when no node answers")
    func listsFromEtcd() async throws {
        let cluster = try Cluster()
        let etcd = try await EtcdServer(in: cluster.folder)
        do {
            let b = try await cluster.start(
                "b", entries: #"{"version": 1, "entries": [{"id": "clock", "plugin": "clock"}]}"#,
                extra: ["--discovery", etcd.discovery, "--lease-ttl", "30"])
            var listed = try await runConsole(["--discovery", etcd.discovery, "--json", "members"])
            var attempts = 0
            while !listed.out.contains("\"clock\""), attempts < 200 {
                attempts += 1
                listed = try await runConsole(["--discovery", etcd.discovery, "--json", "members"])
            }
            #expect(listed.code == 0)
            #expect(listed.out.contains("\"name\": \"b\""))
            #expect(listed.out.contains("\"service\": \"clock\""))
            // No node answers now; its keys live until its lease (30 s) ends.
            await b.stop()
            let text = try await runConsole(["--discovery", etcd.discovery, "--node", "unix:/nonexistent", "members"])
            #expect(text.code == 0)
            #expect(text.out.contains("b  incarnation"))
            #expect(text.out.contains("  clock  (ClockAPI)"))
        } catch {
            await etcd.stop()
            await cluster.stop()
            throw error
        }
        await etcd.stop()
        await cluster.stop()
    }

    @Test("members with --discovery exits 69 when etcd cannot be reached")
    func etcdUnreachable() async throws {
        let port = try LoopbackPorts.free(1)[0]
        let result = try await runConsole(["--discovery", "etcd:http://127.0.0.1:\(port)", "--timeout", "1", "members"])
        #expect(result.code == 69)
        #expect(result.err.contains("error: etcd cannot be reached"))
    }
}
