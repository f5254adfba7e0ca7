import CordisProcessTesting
import Foundation
import Testing

/// etcd holding more than a node reads in one answer, and keys under `cordis/` no node uses: a node
/// started then still finds its members and services, and says once that it ignores the other keys.
@Suite("Cluster: a large etcd directory", .enabled(if: EtcdServer.isInstalled), .serialized)
struct ClusterEtcdLargeDirectoryTests {
    @Test("with 9 MiB of other keys under cordis/, new nodes find each other; a change to such a key is logged once")
    func largeDirectoryDoesNotBlind() async throws {
        try await ClusterEtcdTests.run { cluster, etcd in
            // 92 keys of 100 KiB: more than the 8 MiB a node reads in one answer.
            let value = String(repeating: "x", count: 100 * 1024)
            for index in 0..<92 {
                try #require(await etcd.control(["put", "cordis/junk/\(index)", value]) != nil)
            }
            let b = try await cluster.start("b", entries: ClusterEtcdTests.clock, extra: ClusterEtcdTests.discovery(etcd))
            let a = try await cluster.start("a", entries: ClusterEtcdTests.greeter, extra: ClusterEtcdTests.discovery(etcd))
            let console = try await cluster.control(a)
            #expect(try await console.awaitFiber(ofEntry: "greeter", inState: "active")?.provider("clock") == "b",
                    "\(a.process.text.suffix(1500))")
            #expect(await etcd.control(["put", "cordis/junk/new", "1"]) != nil)
            #expect(await a.waitForLine(containing: "etcd holds keys under cordis/ that no node uses (such as cordis/junk/new)"))
            #expect(await etcd.control(["put", "cordis/junk/newer", "2"]) != nil)
            // A change after both, which a must see: b's clock withdrawn (its key deleted) drops the greeter.
            _ = try await console.request(.disable, node: "b", args: ["entry": "clock"])
            #expect(try await console.awaitFiber(ofEntry: "greeter", inState: "pending", timeout: .seconds(10)) != nil)
            #expect(a.process.text.occurrences(of: "that no node uses") == 1, "\(a.process.text.suffix(1500))")
            _ = b
        }
    }
}
