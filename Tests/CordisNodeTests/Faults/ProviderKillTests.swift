import CordisNode
import Foundation
import Testing

/// A provider's node is killed (SIGKILL) while consumers on two other nodes call it without pause:
/// every call ends within its timeout, with the counter's value or a clear error; the consumers go
/// pending and come back when the node restarts; no call is answered twice and none is lost.
///
/// How "twice" and "lost" are seen: the counter answers each `add 1` with its new value, so the values
/// of one life are distinct, and after the restart (which starts the counter at 1,000,000, to tell the
/// lives apart) the successful calls' values are exactly 1,000,001 … the counter's final value.
@Suite("Faults: a provider killed under continuous calls", .faultTurns)
struct ProviderKillTests {
    static let secondLife = 1_000_000
    static let clearCodes: Set<String> = ["withdrawn", "rejected"]

    @Test("kill -9 of the counter's node while two other nodes call it: every call ends in time, clearly; none twice, none lost")
    func killUnderContinuousCalls() async throws {
        try await TestCluster.run { cluster in
            let b = try await cluster.start("b", entries: #"[{"id": "clock", "plugin": "clock"}, {"id": "counter", "plugin": "counter"}]"#)
            let a = try await cluster.start("a", entries: #"[{"id": "greeter", "plugin": "greeter"}]"#, peers: [b])
            let c = try await cluster.start("c", entries: #"[{"id": "greeter", "plugin": "greeter"}]"#, peers: [b, a])
            let consoles = [try await cluster.control(a), try await cluster.control(c)]
            for console in consoles {
                try #require(try await console.awaitFiber(ofEntry: "greeter", inState: "active") != nil)
                try #require(try await console.awaitStatus("a proxy of b's counter") { $0.fibers(plugin: "remote:counter").count == 1 })
            }
            let callers = consoles.map { ContinuousCaller(console: $0, timeout: .seconds(10)) }
            for caller in callers { try #require(await caller.awaitSuccesses(20)) }

            b.process.signal(SIGKILL)
            #expect(await b.process.exitCode() == SIGKILL)
            for console in consoles {
                #expect(try await console.awaitFiber(ofEntry: "greeter", inState: "pending") != nil)
                #expect(try await console.awaitStatus("no proxy of b's counter") { $0.fibers(plugin: "remote:counter").isEmpty })
            }
            // The second life counts from 1,000,000.
            try cluster.folder.write("b.json", """
                {"version": 1, "entries": [{"id": "clock", "plugin": "clock"},
                {"id": "counter", "plugin": "counter", "config": {"start": \(Self.secondLife)}}]}
                """)
            let failuresBefore = callers.map { $0.all.count - $0.successes }
            let successesBefore = callers.map(\.successes)
            let again = try await cluster.restart(b)
            for console in consoles {
                #expect(try await console.awaitFiber(ofEntry: "greeter", inState: "active")?.provider("clock") == "b")
            }
            for (caller, before) in zip(callers, successesBefore) { #expect(await caller.awaitSuccesses(before + 20)) }
            var records: [CallRecord] = []
            for caller in callers { records += await caller.stop() }

            // Every call ended within its timeout, with a value or a clear error.
            for record in records {
                #expect(record.took < .seconds(10), "a call took \(record.took)")
                if let code = record.code {
                    #expect(Self.clearCodes.contains(code), "unclear failure: \(code) \(record.message ?? "")")
                }
            }
            // Calls failed while b was gone (unless b died between two calls of every caller).
            let failed = records.filter { $0.code != nil }.count
            print("provider kill: \(records.count) calls, \(failed) failed (\(failuresBefore) before the restart), codes \(Set(records.compactMap(\.code)))")
            let values = records.compactMap(\.value)
            let first = values.filter { $0 < Self.secondLife }
            let second = values.filter { $0 > Self.secondLife }.sorted()
            #expect(Set(first).count == first.count, "a value of the first life was answered twice")
            let bConsole = try await cluster.control(again)
            let final = try #require(try await bConsole.request(.call, args: ["service": "counter", "method": "value"]).intValue)
            #expect(second == Array(stride(from: Self.secondLife + 1, through: final, by: 1)),
                    "the second life's answers are not exactly the counts from \(Self.secondLife + 1) to \(final)")
        }
    }
}
