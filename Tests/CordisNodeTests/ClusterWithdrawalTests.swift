import CordisNode
import Foundation
import Testing

/// Orderly withdrawal across real nodes: a remote consumer unloads and acknowledges before the
/// provider's own teardown runs, comes back when the provider does, and reverts its effects on it.
///
/// How the order is observed: each process writes its log lines one at a time, in the order they happen,
/// to its own pipe, so the order of lines within one process's output is its real order. The consumer's
/// node logs `bye` (the greeter's disposer) and only then `acknowledged the withdrawal …`, after which
/// it sends the acknowledgement; the provider's node logs `withdrawal of clock finished: acknowledged
/// by ["a"]` when that acknowledgement arrives (not the deadline's or a lost link's message) and only then
/// runs the clock's teardown (`clock stopped`). The acknowledgement message links the two chains, so
/// `bye` happened before `clock stopped`. Timestamps from two processes would be weaker (the test reads
/// the two pipes on different threads, so arrival order proves nothing).
@Suite("Cluster: orderly withdrawal")
struct ClusterWithdrawalTests {
    static let acknowledgedByA = #"withdrawal of clock finished: acknowledged by ["a"]"#

    @Test("Disabling a remote provider drops its consumer to pending before the provider's teardown, and enabling it brings the consumer back")
    func withdrawalKeepsOrderAcrossNodesAndReturns() async throws {
        try await TestCluster.run { cluster in
            let b = try await cluster.start("b", entries: #"[{"id": "clock", "plugin": "clock"}]"#)
            let a = try await cluster.start("a", entries: #"[{"id": "greeter", "plugin": "greeter"}]"#, peers: [b])
            let console = try await cluster.control(a)
            let bConsole = try await cluster.control(b)
            try #require(await a.waitForLine(containing: "hello at"))
            try #require(try await console.awaitFiber(ofEntry: "greeter", inState: "active") != nil)

            // Withdrawal: the disable returns once b's clock is disposed (after a's acknowledgement).
            let disabled = try await bConsole.request(.disable, args: ["entry": "clock"])
            #expect(disabled.objectValue?["disabled"]?.boolValue == true)
            #expect(try await console.awaitFiber(ofEntry: "greeter", inState: "pending")?["missing"]?.arrayValue == ["clock"])
            try #require(await a.waitForLine(containing: "acknowledged the withdrawal of clock on b"))
            try #require(await b.waitForLine(containing: "clock stopped"))
            let aText = a.process.text, bText = b.process.text
            let bye = try #require(aText.lineIndex(containing: "] greeter: bye"))
            let ack = try #require(aText.lineIndex(containing: "acknowledged the withdrawal of clock on b"))
            #expect(bye < ack)
            let finished = try #require(bText.lineIndex(containing: Self.acknowledgedByA))
            let stopped = try #require(bText.lineIndex(containing: "clock stopped"))
            #expect(finished < stopped)
            #expect(!bText.contains("went ahead without acknowledgements"))
            // The change is logged with who made it.
            #expect(await b.waitForLine(containing: "via console test-console (uid \(getuid())): disable entry clock"))

            // Return: the clock comes back, so does the greeter.
            _ = try await bConsole.request(.enable, args: ["entry": "clock"])
            try #require(await a.waitForOccurrences(of: "hello at", count: 2))
            #expect(try await console.awaitFiber(ofEntry: "greeter", inState: "active")?.provider("clock") == "b")
        }
    }

    @Test("A badge's effect on a remote counter is reverted: when the counter is withdrawn, and when the badge goes")
    func badgeRevertsOnTheRemoteCounter() async throws {
        try await TestCluster.run { cluster in
            let b = try await cluster.start("b", entries: #"[{"id": "counter", "plugin": "counter", "config": {"start": 5}}]"#)
            let a = try await cluster.start("a", entries: #"[{"id": "badge", "plugin": "badge"}]"#, peers: [b])
            let console = try await cluster.control(a)
            let bConsole = try await cluster.control(b)
            try #require(await a.waitForLine(containing: "badge added, counter at 6"))
            #expect(try await bConsole.request(.call, args: ["service": "counter", "method": "value"]).intValue == 6)

            // The counter is withdrawn: the badge's disposer still reaches it, and it is back at 5
            // before the counter's own teardown.
            _ = try await bConsole.request(.disable, args: ["entry": "counter"])
            try #require(await a.waitForLine(containing: "badge removed, counter at 5"))
            #expect(try await console.awaitFiber(ofEntry: "badge", inState: "pending") != nil)
            #expect(await b.waitForLine(containing: #"withdrawal of counter finished: acknowledged by ["a"]"#))

            // It comes back (counting from 5 again), the badge adds one; removing the badge takes it back.
            _ = try await bConsole.request(.enable, args: ["entry": "counter"])
            try #require(await a.waitForOccurrences(of: "badge added, counter at 6", count: 2))
            _ = try await console.request(.disable, args: ["entry": "badge"])
            try #require(await a.waitForOccurrences(of: "badge removed, counter at 5", count: 2))
            #expect(try await bConsole.request(.call, args: ["service": "counter", "method": "value"]).intValue == 5)
        }
    }
}
