import Cordis
import CordisProcessTesting
import Foundation
import Testing

/// A link on demand, with real `cordis-node`s in etcd mode against a real etcd: the addresses etcd lists
/// for a member are tried in order, and one where another node answers is closed.
@Suite("Cluster: links on demand through etcd", .enabled(if: EtcdServer.isInstalled), .serialized)
struct ClusterEtcdDialTests {
    @Test("b's first listed address is c's: a's call reaches c there and closes that link in order (c does not dial a back), then opens one to b at b's next address")
    func wrongPeerThenNextAddress() async throws {
        try await ClusterEtcdTests.run { cluster, etcd in
            let c = try await cluster.start("c", entries: "[]", extra: ClusterEtcdTests.discovery(etcd))
            _ = try await cluster.start(
                "b", entries: ClusterEtcdTests.clock,
                extra: ClusterEtcdTests.discovery(etcd, ["--advertise", "unix:\(c.socket)", "--advertise", "unix:\(cluster.folder.path("b.sock"))"]))
            let a = try await cluster.start(
                "a", entries: ClusterEtcdTests.greeter, extra: ClusterEtcdTests.discovery(etcd, ["--log-level", "debug"]))
            let console = try await cluster.control(a)
            // The greeter's call to b's clock went over a link to b.
            #expect(try await console.awaitFiber(ofEntry: "greeter", inState: "active")?.provider("clock") == "b")
            #expect(await a.waitForLine(containing: "from b"))
            // c was reached first, at the address b lists first; a closed that link in order (`idle`), so c
            // does not take it for a failure of a's and dial a again.
            #expect(await a.waitForLine(containing: "closing a link dialled: dialled b and reached c"))
            #expect(await c.waitForLine(containing: "a said goodbye: idle"), "\(c.process.text)")
            // Only the link to b stays: the one that reached c was closed (awaited, with a deadline).
            let clock = ContinuousClock()
            let end = clock.now + .seconds(10)
            var names: [String] = []
            var members: [JSONObject] = []
            while clock.now < end {
                members = try await console.request(.members)["members"]?.arrayValue?.compactMap(\.objectValue) ?? []
                names = members.filter { $0["linked"]?.boolValue == true }.compactMap { $0["name"]?.stringValue }.sorted()
                if names == ["a", "b"] { break }
            }
            #expect(names == ["a", "b"], "\(members)")
            #expect(!c.process.text.contains("link to a lost"), "\(c.process.text)")
        }
    }
}
