import CordisProcessTesting
import Foundation
import Testing

/// The etcd lease is renewed off `CordisActor`: a node whose actor is blocked for longer than its
/// lease's time to live (a plugin's long job, a burst of directory changes on a loaded machine) keeps
/// its lease and its life.
@Suite("Cluster: a node in etcd mode whose CordisActor is busy keeps its lease", .enabled(if: EtcdServer.isInstalled), .serialized)
struct ClusterEtcdBusyActorTests {
    @Test("b's actor blocked for 3 s with a 2 s lease: b is never degraded, keeps its lease id, and a's greeter stays on b's clock")
    func busyActorKeepsTheLease() async throws {
        try await ClusterEtcdTests.run { cluster, etcd in
            let entries = #"""
                [{"id": "clock", "plugin": "clock"},
                 {"id": "busy", "plugin": "busy", "config": {"seconds": 3}, "disabled": true}]
                """#
            let b = try await cluster.start(
                "b", entries: entries, extra: ClusterEtcdTests.discovery(etcd), executable: NodeProcess.testNodeExecutable)
            let a = try await cluster.start("a", entries: ClusterEtcdTests.greeter, extra: ClusterEtcdTests.discovery(etcd))
            let consoleOfA = try await cluster.control(a)
            #expect(try await consoleOfA.awaitFiber(ofEntry: "greeter", inState: "active")?.provider("clock") == "b")
            let consoleOfB = try await cluster.control(b)
            let lease = try #require(try await consoleOfB.request(.status)["nodes"]?.arrayValue?.first?["lease"]?["id"]?.stringValue)

            // The console's request is served on b's actor too: sent without waiting for the answer.
            let enable = Task { try await consoleOfB.request(.enable, args: ["entry": "busy"], timeout: .seconds(30)) }
            try #require(await b.waitForLine(containing: "busy: blocking"))
            try #require(await b.waitForLine(containing: "busy: done", timeout: .seconds(20)))
            _ = try? await enable.value

            let after = try await consoleOfB.request(.status)["nodes"]?.arrayValue?.first
            #expect(after?["lease"]?["id"]?.stringValue == lease, "\(String(describing: after))")
            #expect(after?["degraded"] == nil, "\(String(describing: after))")
            #expect(!b.process.text.contains("degraded: "), "\(b.process.text.suffix(2000))")
            #expect(!b.process.text.contains("as a new incarnation"), "\(b.process.text.suffix(2000))")
            #expect(!a.process.text.contains("b left etcd"), "\(a.process.text.suffix(2000))")
            #expect(try await consoleOfA.awaitFiber(ofEntry: "greeter", inState: "active")?.provider("clock") == "b")
        }
    }
}
