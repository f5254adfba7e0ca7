import CordisControl
import CordisJSON
import CordisWire
import Foundation
import Testing

/// What a node's control API keeps for one console is bounded.
@Suite("Control API bounds", .serialized)
struct ControlBoundsTests {
    @Test("a session may follow 16 event streams; the 17th subscription is rejected and the node stays up")
    func followSubscriptionsAreBounded() async throws {
        let cluster = try Cluster()
        defer { Task { await cluster.stop() } }
        let node = try await cluster.start("a", entries: #"{"version":1,"entries":[{"id":"clock","plugin":"clock"}]}"#)
        let client = try await ControlClient.connect(to: Address(parsing: cluster.address("a")), name: "bounds-test")
        let follow: JSONObject = ["follow": true, "history": false, "cluster": false]
        for _ in 0 ..< 16 {
            _ = try await client.request(.subscribe, args: follow)
        }
        await #expect(throws: ControlFailure.self) { try await client.request(.subscribe, args: follow) }
        _ = try await client.request(.unsubscribe)
        _ = try await client.request(.subscribe, args: follow)
        await client.close()
        #expect(node.process.isRunning)
    }
}
