import CordisControl
import Cordis
import CordisProcessTesting
import Foundation
import Testing

/// A node in etcd mode that lost its lease and registered again as a new incarnation ends its old
/// life's links itself, so no peer keeps talking to a life the cluster declared over.
@Suite("Cluster: a new incarnation after a lost lease closes the old life's links", .enabled(if: EtcdServer.isInstalled), .serialized)
struct ClusterEtcdIncarnationTests {
    static func incarnation(of member: String, in answer: JSONValue) -> String? {
        answer["members"]?.arrayValue?.first { $0["name"]?.stringValue == member && $0["reachable"]?.boolValue == true }?["incarnation"]?
            .stringValue
    }

    @Test("b, stopped past its lease and registered again, closes the link a still held to its old life; a links to the new one")
    func oldLinksClosed() async throws {
        try await ClusterEtcdTests.run { cluster, etcd in
            // Heartbeats time out after 30 s and idle links after 60 s: neither ends the old life's link here.
            try cluster.folder.write("b.json", "{\"version\": 1, \"entries\": \(ClusterEtcdTests.clock)}")
            let b = try await cluster.launch("b", arguments: [
                "--name", "b", "--entries", cluster.folder.path("b.json"), "--listen", "unix:\(cluster.folder.path("b.sock"))",
                "--heartbeat-interval", "0.2", "--heartbeat-timeout", "30", "--idle-link-timeout", "60",
            ] + ClusterEtcdTests.discovery(etcd))
            // a follows no etcd: only b can end the link to b's old life.
            try cluster.folder.write("a.json", "{\"version\": 1, \"entries\": \(ClusterEtcdTests.greeter)}")
            let a = try await cluster.launch("a", arguments: [
                "--name", "a", "--entries", cluster.folder.path("a.json"), "--listen", "unix:\(cluster.folder.path("a.sock"))",
                "--heartbeat-interval", "0.2", "--heartbeat-timeout", "30", "--peer", b.address,
            ])
            // c watches etcd: it tells the test when b's lease has expired.
            let c = try await cluster.start("c", entries: "[]", extra: ClusterEtcdTests.discovery(etcd))
            let console = try await cluster.control(a)
            let watcher = try await cluster.control(c)
            #expect(try await console.awaitFiber(ofEntry: "greeter", inState: "active")?.provider("clock") == "b")
            let first = try #require(Self.incarnation(of: "b", in: try await console.request(.members)))
            var listed = false
            for _ in 0..<2_000 where !listed {
                listed = (try await watcher.request(.members))["members"]?.arrayValue?.contains { $0["name"]?.stringValue == "b" } == true
            }
            #expect(listed)
            try #require(await b.process.suspend())
            var expired = false
            let deadline = ContinuousClock.now + .seconds(10)
            while !expired, ContinuousClock.now < deadline {
                // Once its lease expired, b stays listed, down (nobody heard it leave).
                expired = (try await watcher.request(.members))["members"]?.arrayValue?.contains {
                    $0["name"]?.stringValue == "b" && $0["health"]?.stringValue == "down"
                } == true
            }
            b.process.signal(SIGCONT)
            #expect(expired, "b's lease never expired")
            #expect(await b.waitForLine(containing: "registered in etcd again as a new incarnation", timeout: .seconds(10)))
            // a's link to the old life goes; its dialler links to the new life.
            var now: String?
            let linkDeadline = ContinuousClock.now + .seconds(10)
            while ContinuousClock.now < linkDeadline {
                now = Self.incarnation(of: "b", in: try await console.request(.members))
                if let now, now != first { break }
            }
            #expect(now != nil && now != first, "a still holds b's old life \(first)")
            #expect(try await console.awaitFiber(ofEntry: "greeter", inState: "active")?.provider("clock") == "b")
        }
    }
}
