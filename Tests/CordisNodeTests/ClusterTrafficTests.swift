import CordisControl
import Cordis
import CordisProcessTesting
import Foundation
import Testing

/// The `traffic` command on real `cordis-node`s: what a node sent and received, by kind.
@Suite("Cluster: a node counts its messages by kind", .serialized)
struct ClusterTrafficTests {
    static func counts(_ answer: JSONValue, _ direction: String, _ kind: String) -> Int {
        answer[direction]?[kind]?.intValue ?? -1
    }

    @Test("in the mesh a node counts heartbeats, member lists, announcements, calls and control requests, and nothing for etcd")
    func meshCounts() async throws {
        try await TestCluster.run { cluster in
            // Heartbeats every 0.2 s (the test cluster's timing).
            let b = try await cluster.start("b", entries: #"[{"id": "clock", "plugin": "clock"}]"#)
            let a = try await cluster.start("a", entries: #"[{"id": "greeter", "plugin": "greeter"}]"#, peers: [b])
            let console = try await cluster.control(a)
            #expect(try await console.awaitFiber(ofEntry: "greeter", inState: "active")?.provider("clock") == "b")
            let first = try await console.request(.traffic)
            #expect(first["node"]?.stringValue == "a")
            #expect(Self.counts(first, "received", "announcement") >= 1)
            #expect(Self.counts(first, "sent", "membership") >= 1)
            #expect(Self.counts(first, "received", "membership") >= 1)
            #expect(Self.counts(first, "sent", "call") >= 1)
            #expect(Self.counts(first, "received", "call") >= 1)
            #expect(Self.counts(first, "received", "control") >= 1)
            #expect(Self.counts(first, "sent", "etcd") == 0)
            // Heartbeats go on while idle, one way and back: await them with a deadline.
            let deadline = ContinuousClock.now + .seconds(20)
            var later = first
            while ContinuousClock.now < deadline,
                  Self.counts(later, "sent", "heartbeat") < Self.counts(first, "sent", "heartbeat") + 5
                    || Self.counts(later, "received", "heartbeat") < Self.counts(first, "received", "heartbeat") + 5 {
                later = try await console.request(.traffic)
            }
            #expect(Self.counts(later, "sent", "heartbeat") >= Self.counts(first, "sent", "heartbeat") + 5)
            #expect(Self.counts(later, "received", "heartbeat") >= Self.counts(first, "received", "heartbeat") + 5)
            #expect((later["seconds"]?.doubleValue ?? 0) > (first["seconds"]?.doubleValue ?? 0))
            // b counted a's calls to its clock as received.
            let bConsole = try await cluster.control(b)
            #expect(Self.counts(try await bConsole.request(.traffic), "received", "call") >= 1)
        }
    }

    @Test("in etcd mode a node counts its requests to etcd and their answers")
    func etcdCounts() async throws {
        try await ClusterEtcdTests.run { cluster, etcd in
            let a = try await cluster.start("a", entries: #"[{"id": "clock", "plugin": "clock"}]"#, extra: ClusterEtcdTests.discovery(etcd))
            let console = try await cluster.control(a)
            // Registration, publishing, listing and the watch at least, and their answers: the node may
            // report ready before the last answers arrive (a release build asks that soon), so await them.
            let settled = ContinuousClock.now + .seconds(20)
            var first = try await console.request(.traffic)
            while ContinuousClock.now < settled,
                  Self.counts(first, "sent", "etcd") < 4 || Self.counts(first, "received", "etcd") < 3 {
                first = try await console.request(.traffic)
            }
            #expect(Self.counts(first, "sent", "etcd") >= 4)
            #expect(Self.counts(first, "received", "etcd") >= 3)
            // The keepalive (a third of the 2 s TTL) goes on: await two more requests with a deadline.
            let deadline = ContinuousClock.now + .seconds(20)
            var later = first
            while ContinuousClock.now < deadline, Self.counts(later, "sent", "etcd") < Self.counts(first, "sent", "etcd") + 2 {
                later = try await console.request(.traffic)
            }
            #expect(Self.counts(later, "sent", "etcd") >= Self.counts(first, "sent", "etcd") + 2)
            // Alone in the cluster: no member lists, no announcements to anyone.
            #expect(Self.counts(later, "sent", "membership") == 0)
            #expect(Self.counts(later, "sent", "announcement") == 0)
        }
    }
}
