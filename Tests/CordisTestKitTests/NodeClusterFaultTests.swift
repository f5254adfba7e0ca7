import Cordis
import CordisNode
import CordisTestKit
import Foundation
import Testing

/// The kit's faults against real `cordis-node` processes: a killed provider's node, a cut link, a
/// paused node, a delayed link.
@Suite("CordisTestKit: faults")
struct NodeClusterFaultTests {
    static let clock = Entry(id: "clock", plugin: "clock")
    static let greeter = Entry(id: "greeter", plugin: "greeter")
    static let counter = Entry(id: "counter", plugin: "counter")

    @Test("A consumer goes pending when its provider's node is killed and active when it returns", arguments: [
        ClusterOptions.Transport.unix, .tcp, .tls,
    ])
    func consumerFollowsProvidersNode(transport: ClusterOptions.Transport) async throws {
        try await NodeCluster.run(
            [NodeSpec("a", entries: [Self.clock]), NodeSpec("b", entries: [Self.greeter])],
            options: ClusterOptions(transport: transport)
        ) { cluster in
            let a = try cluster.node("a"), b = try cluster.node("b")
            let greeter = try await b.awaitFiber("greeter", .active)
            #expect(greeter.injects.first { $0.service == "clock" }?.provider?.node == "a")
            await a.kill()
            let pending = try await b.awaitFiber("greeter", .pending)
            #expect(pending.missing.contains("clock"))
            try await a.restart()
            try await b.awaitFiber("greeter", .active)
            try await b.awaitLog(containing: "hello at")
        }
    }

    @Test("A cut link fails the call in flight over it, leaves the other links alone, and heals", arguments: [
        ClusterOptions.Transport.unix, .tcp, .tls,
    ])
    func cutLinkFailsInFlightCall(transport: ClusterOptions.Transport) async throws {
        try await NodeCluster.run([
            NodeSpec("a", entries: [Self.counter]), NodeSpec("b"), NodeSpec("c"),
        ], options: ClusterOptions(transport: transport)) { cluster in
            let b = try cluster.node("b"), c = try cluster.node("c")
            try await b.awaitService(CounterServiceKey.self, from: "a")
            try await c.awaitService(CounterServiceKey.self, from: "a")
            let counterFromB = b.service(CounterServiceKey.self)
            #expect(try await counterFromB.add(1) == 1)

            try cluster.cut("a", "b")
            let failure = await #expect(throws: RemoteCallError.self) { _ = try await counterFromB.add(1) }
            #expect(failure?.code == .withdrawn, "\(String(describing: failure))")
            // c's link to a was not cut: its calls go on, and the count shows b's call never arrived.
            let fromC = try await c.service(CounterServiceKey.self).add(1)
            #expect(fromC == 2, "\(cluster.logs())")
            try await b.awaitMember("a", .down)

            try cluster.heal("a", "b")
            try await b.awaitMember("a", .up)
            try await b.awaitService(CounterServiceKey.self, from: "a")
            #expect(try await counterFromB.add(1) == 3)
        }
    }

    @Test("In etcd mode (the kit's own etcd) too, a consumer follows its provider's node", .enabled(if: EtcdServer.isInstalled))
    func etcdMode() async throws {
        try await NodeCluster.run(
            [NodeSpec("a", entries: [Self.clock]), NodeSpec("b", entries: [Self.greeter])],
            options: ClusterOptions(discovery: .etcd)
        ) { cluster in
            let a = try cluster.node("a"), b = try cluster.node("b")
            #expect(cluster.etcd != nil)
            #expect(a.arguments.contains("--discovery") && !b.arguments.contains("--peer"))
            try await b.awaitFiber("greeter", .active)
            await a.kill()
            try await b.awaitFiber("greeter", .pending)
            try await a.restart()
            try await b.awaitFiber("greeter", .active)
        }
    }

    @Test("A paused node is found silent by its peers and up again once it goes on")
    func pausedNodeIsSuspected() async throws {
        try await NodeCluster.run([NodeSpec("a", entries: [Self.clock]), NodeSpec("b", entries: [Self.greeter])]) { cluster in
            let a = try cluster.node("a"), b = try cluster.node("b")
            try await b.awaitMember("a", .up)
            try await a.pause()
            try await b.awaitMember("a", .down)
            try await b.awaitFiber("greeter", .pending)
            a.resume()
            try await b.awaitMember("a", .up)
            try await b.awaitFiber("greeter", .active)
        }
    }

    @Test("A delayed link still carries calls, and a call slower than its timeout fails with timeout")
    func delayedLink() async throws {
        try await NodeCluster.run([
            NodeSpec("a", entries: [Self.counter]), NodeSpec("b", arguments: ["--call-timeout", "1"]),
        ]) { cluster in
            let b = try cluster.node("b")
            try await b.awaitService(CounterServiceKey.self, from: "a")
            try cluster.delay("a", "b", by: .milliseconds(100))
            #expect(try await b.call("counter", "add", ["_0": 1]).intValue == 1)
            try cluster.delay("a", "b", by: .milliseconds(1_500))
            let failure = await #expect(throws: RemoteCallError.self) { _ = try await b.call("counter", "add", ["_0": 1]) }
            #expect(failure?.code == .timeout || failure?.code == .withdrawn, "\(String(describing: failure))")
            try cluster.delay("a", "b", by: .zero)
        }
    }
}
