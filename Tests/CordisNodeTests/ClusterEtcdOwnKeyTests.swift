import CordisProcessTesting
import Foundation
import Testing

/// A node's own member key in etcd, deleted by someone with write access while the node's lease lives: the
/// node registers again, so it stays in the others' view, and its name stays its own.
@Suite("Cluster: a node's own member key deleted in etcd", .enabled(if: EtcdServer.isInstalled), .serialized)
struct ClusterEtcdOwnKeyTests {
    @Test("b's member key deleted while its lease lives: b registers it again under the same life, and a second b is still refused")
    func deletedOwnKeyIsRegisteredAgain() async throws {
        try await ClusterEtcdTests.run { cluster, etcd in
            let b = try await cluster.start("b", entries: ClusterEtcdTests.clock, extra: ClusterEtcdTests.discovery(etcd))
            let before = try #require(await etcd.control(["get", "cordis/members/b", "--print-value-only"]))
            try #require(before.contains("\"name\":\"b\""), "\(before)")
            #expect(await etcd.control(["del", "cordis/members/b"]) != nil)
            #expect(await b.waitForLine(containing: "registered its member key again"), "\(b.process.text.suffix(1500))")
            let after = await etcd.control(["get", "cordis/members/b", "--print-value-only"]) ?? ""
            #expect(after == before, "the key came back as \(after), not as \(before)")
            try cluster.folder.write("b2.json", #"{"version": 1, "entries": []}"#)
            let second = try cluster.spawn("b2", arguments: [
                "--name", "b", "--entries", cluster.folder.path("b2.json"), "--listen", "unix:\(cluster.folder.path("b2.sock"))",
            ] + ClusterEtcdTests.discovery(etcd))
            #expect(await second.exitCode() == 69)
            #expect(second.text.contains("the name b is registered in etcd by a live member"), "\(second.text)")
        }
    }
}
