import Cordis
import CordisNode
import CordisTestKit
import Foundation
import Testing

/// The kit's reads, waits, calls, entry changes and errors against real `cordis-node` processes.
@Suite("CordisTestKit: a cluster")
struct NodeClusterTests {
    @Test("Status, events, entry changes and typed calls, on entries given as JSON")
    func statusEventsAndChanges() async throws {
        try await NodeCluster.run([
            NodeSpec("a", json: #"{"version": 1, "entries": [{"id": "counter", "plugin": "counter", "config": {"start": 10}}]}"#),
            NodeSpec("b", json: #"[{"id": "badge", "plugin": "badge"}]"#),
        ]) { cluster in
            let a = try cluster.node("a"), b = try cluster.node("b")
            // Waits on one node at the same time share its link.
            async let badge = b.awaitFiber("badge", .active)
            async let proxy = b.awaitService("counter", from: "a")
            async let members = b.awaitMember("a", .up)
            _ = try await (badge, proxy, members)
            try await cluster.awaitAll(.active)
            let status = try await b.status()
            #expect(status.name == "b")
            #expect(status.fibers.contains { $0.plugin == "remote:counter" })
            // badge added 1 to the counter on a.
            #expect(try await a.service(CounterServiceKey.self).value() == 11)

            let events = try await b.events()
            try await a.setConfig("counter", ["start": 100])
            let pending = try await events.next(entry: "badge", .active)
            #expect(pending.node == "b")
            #expect(try await a.service(CounterServiceKey.self).value() == 101)
            await events.close()

            try await a.disable("counter")
            try await b.awaitFiber("badge", .pending)
            try await a.enable("counter")
            try await b.awaitFiber("badge", .active)
            try await b.add(Entry(id: "greeter", plugin: "greeter"))
            let refused = await #expect(throws: TestKitError.self) { try await b.add(Entry(id: "greeter", plugin: "greeter")) }
            #expect(refused?.code == .refused)
            try await b.remove("greeter")

            // The file, edited as an operator would, and SIGHUP; an entry's fiber restarted.
            try b.replaceEntries([Entry(id: "badge", plugin: "badge"), Entry(id: "second", plugin: "badge")])
            try await b.awaitFiber("second", .active)
            try await b.restart("second")
            try await b.awaitFiber("second", .active)
            // Two badges each added 1 to the counter (started again at 100 by the config change).
            #expect(try await a.service(CounterServiceKey.self).value() == 102)
        }
    }

    @Test("A missed deadline throws an error that carries every node's log")
    func timeoutCarriesLogs() async throws {
        try await NodeCluster.run([NodeSpec("a", entries: [Entry(id: "greeter", plugin: "greeter")])]) { cluster in
            let a = try cluster.node("a")
            let error = await #expect(throws: TestKitError.self) { try await a.awaitFiber("greeter", .active, within: .milliseconds(300)) }
            #expect(error?.code == .timeout)
            #expect(error?.description.contains("--- a ---") == true)
            #expect(error?.description.contains("listening on") == true, "\(String(describing: error))")
        }
    }

    @Test("Bad input is refused with an error, never a crash")
    func badInput() async throws {
        let badName = await #expect(throws: TestKitError.self) { _ = try await NodeCluster.start([NodeSpec("no spaces")]) }
        #expect(badName?.code == .invalidArgument)
        try await NodeCluster.run([NodeSpec("a")], options: ClusterOptions(relays: false)) { cluster in
            #expect(throws: TestKitError.self) { try cluster.node("nobody") }
            #expect(throws: TestKitError.self) { try cluster.cut("a", "a") }
            let duplicate = await #expect(throws: TestKitError.self) { try await cluster.add(NodeSpec("a")) }
            #expect(duplicate?.code == .invalidArgument)
            let a = try cluster.node("a")
            let running = await #expect(throws: TestKitError.self) { try await a.restart() }
            #expect(running?.code == .invalidArgument)
        }
        let missing = await #expect(throws: TestKitError.self) {
            _ = try await NodeCluster.start([NodeSpec("a")], options: ClusterOptions(executable: .product("no-such-node")))
        }
        #expect(missing?.code == .startFailed)
    }

    @Test("An orderly stop exits 0 and a restart under the same name is a new incarnation")
    func terminateAndRestart() async throws {
        try await NodeCluster.run([
            NodeSpec("a", entries: [Entry(id: "clock", plugin: "clock")]), NodeSpec("b", entries: [Entry(id: "greeter", plugin: "greeter")]),
        ]) { cluster in
            let a = try cluster.node("a"), b = try cluster.node("b")
            try await b.awaitFiber("greeter", .active)
            let before = try await b.awaitMember("a", .up)
            #expect(try await a.terminate() == 0)
            try await b.awaitLog(containing: "a said goodbye")
            try await b.awaitFiber("greeter", .pending)
            try await a.restart()
            try await b.awaitFiber("greeter", .active)
            let again = try await b.awaitMember("a", .up)
            #expect(again.incarnation != before.incarnation)
            #expect(a.log.contains("--- restarted ---"))
        }
    }
}
