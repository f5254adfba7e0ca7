import CordisNode
import Foundation
import Testing

/// A node stopped (SIGSTOP) for longer than the heartbeat timeout is declared down by its peers in
/// time and accepted back after SIGCONT; a node restarted twenty times in a row leaves nothing behind
/// on the others. After each, every node's status is what the entries files imply: one fiber per
/// entry, one proxy per remote provider, nothing duplicate or stale.
@Suite("Faults: a node stopped, a node restarted many times", .faultTurns)
struct NodeStopAndRestartTests {
    static let providerEntries = #"[{"id": "clock", "plugin": "clock"}, {"id": "counter", "plugin": "counter"}]"#
    static let consumerEntries = #"[{"id": "greeter", "plugin": "greeter"}, {"id": "badge", "plugin": "badge"}]"#

    @Test("SIGSTOP past the heartbeat timeout: both peers declare it down in time, take it back after SIGCONT, and reconcile")
    func stoppedNodeIsDeclaredDownAndComesBack() async throws {
        try await TestCluster.run { cluster in
            let b = try await cluster.start("b", entries: Self.providerEntries)
            let a = try await cluster.start("a", entries: Self.consumerEntries, peers: [b])
            let c = try await cluster.start("c", entries: Self.consumerEntries, peers: [b, a])
            let members = [a, b, c]
            let consoles = [try await cluster.control(a), try await cluster.control(b), try await cluster.control(c)]
            try #require(try await ClusterReconciliation.awaitReconciled(members, consoles: consoles))

            try #require(await b.process.suspend())
            let stopped = ContinuousClock.now
            // Heartbeat timeout 3 s: declared down by both, well within twice that.
            for peer in [a, c] {
                #expect(await peer.waitForLine(containing: "no heartbeat from b", timeout: .seconds(8)))
            }
            #expect(ContinuousClock.now - stopped < .seconds(9))
            for console in [consoles[0], consoles[2]] {
                #expect(try await console.awaitFiber(ofEntry: "greeter", inState: "pending", timeout: .seconds(8)) != nil)
                #expect(try await console.awaitStatus("no proxy of b's services") {
                    $0.fibers(plugin: "remote:clock").isEmpty && $0.fibers(plugin: "remote:counter").isEmpty
                })
            }
            b.process.signal(SIGCONT)
            let reconciled: Bool
            do {
                reconciled = try await ClusterReconciliation.awaitReconciled(members, consoles: consoles, timeout: .seconds(30))
            } catch {
                Issue.record("\(error)")
                reconciled = false
            }
            // b blames nobody for its own stop: its console stays linked.
            #expect(!b.process.text.contains("no heartbeat from test-console"))
            _ = try await consoles[1].nodeStatus()
            if !reconciled {
                for member in members { Issue.record("\(member.name)'s output:\n\(member.process.text)") }
            }
        }
    }

    @Test("Twenty restarts of the provider's node in a row, under calls: no proxy, fiber, descriptor or memory left behind on the survivors")
    func twentyRestarts() async throws {
        try await TestCluster.run { cluster in
            var b = try await cluster.start("b", entries: Self.providerEntries)
            let a = try await cluster.start("a", entries: Self.consumerEntries, peers: [b])
            let c = try await cluster.start("c", entries: Self.consumerEntries, peers: [b, a])
            let aConsole = try await cluster.control(a)
            let cConsole = try await cluster.control(c)
            var bConsole = try await cluster.control(b)
            try #require(try await ClusterReconciliation.awaitReconciled([a, b, c], consoles: [aConsole, bConsole, cConsole]))
            let caller = ContinuousCaller(console: aConsole, timeout: .seconds(10))
            try #require(await caller.awaitSuccesses(10))
            // One restart first, so what a first restart allocates once (buffers, caches) is in the baseline.
            let restarts = 20
            var startUsage: [String: ProcessUsage] = [:]
            for round in 0...restarts {
                b.process.signal(SIGKILL)
                _ = await b.process.exitCode()
                try #require(try await aConsole.awaitFiber(ofEntry: "greeter", inState: "pending") != nil, "round \(round)")
                b = try await cluster.restart(b)
                bConsole = try await cluster.control(b)
                let reconciled = try await ClusterReconciliation.awaitReconciled(
                    [a, b, c], consoles: [aConsole, bConsole, cConsole], timeout: .seconds(30))
                if !reconciled {
                    for member in [a, b, c] { Issue.record("round \(round), \(member.name):\n\(member.process.text.suffix(4_000))") }
                }
                try #require(reconciled, "round \(round)")
                try #require(await caller.awaitSuccesses(caller.successes + 5), "round \(round)")
                if round == 0 {
                    startUsage = ["a": try #require(a.usage), "c": try #require(c.usage)]
                }
            }
            let records = await caller.stop()
            // The console's own link is the only descriptor a survivor may hold beyond its start, once
            // what the last restart left in flight (a duplicate link draining) has closed.
            var endUsage: [String: ProcessUsage] = [:]
            let settling = ContinuousClock.now
            for member in [a, c] {
                let before = try #require(startUsage[member.name])
                let settled: ProcessUsage = try #require(await member.awaitUsage { $0.descriptors <= before.descriptors })
                endUsage[member.name] = settled
            }
            print("twenty restarts: \(records.count) calls, \(records.filter { $0.code != nil }.count) failed; a \(startUsage["a"]!) -> \(endUsage["a"]!), c \(startUsage["c"]!) -> \(endUsage["c"]!) (settled after \(ContinuousClock.now - settling))")
            for name in ["a", "c"] {
                let before = try #require(startUsage[name]), after = try #require(endUsage[name])
                #expect(after.descriptors <= before.descriptors, "\(name): \(before) -> \(after)")
                // Allocator noise is allowed; a leak of a node's worth of state per restart is not.
                #expect(after.residentKiB <= before.residentKiB + 4 * 1024, "\(name): \(before) -> \(after)")
            }
            for record in records where record.code != nil {
                #expect(["withdrawn", "rejected"].contains(record.code!), "\(record.code!): \(record.message ?? "")")
            }
            // Each of the twenty-one lives of b was announced once and lost once on a.
            #expect(a.process.text.occurrences(of: "link to b lost") == restarts + 1)
        }
    }
}
