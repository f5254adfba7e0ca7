import CordisNode
import CordisWire
import Foundation
import Testing

/// The built-in services take their arguments from the wire: no argument a console or a peer sends may
/// stop the node that provides them.
@Suite("Built-in services: hostile arguments")
struct BuiltinArgumentTests {
    @Test("counter.add past Int.max or Int.min is refused with an error, as is a delta a JSON number cannot carry exactly, and the node keeps counting")
    func counterOverflowIsRefused() async throws {
        try await TestCluster.run { cluster in
            let b = try await cluster.start("b", entries: #"[{"id": "counter", "plugin": "counter", "config": {"start": 5}}]"#)
            let console = try await cluster.control(b)
            try #require(try await console.awaitFiber(ofEntry: "counter", inState: "active") != nil)

            func add(_ delta: Int) async throws -> Int? {
                try await console.request(
                    .call, args: ["service": "counter", "method": "add", "args": .object(["_0": .integer(delta)])]
                ).intValue
            }
            func refused(_ delta: Int, because reason: String) async throws {
                do {
                    let value = try await add(delta)
                    Issue.record("add(\(delta)) was accepted: \(String(describing: value))")
                } catch let failure as ControlFailure {
                    #expect(failure.message.contains(reason), "\(failure)")
                }
            }
            // A delta and a result are JSON numbers, exact within ±(2^53 − 1).
            let largest = 9_007_199_254_740_991
            try await refused(Int.max, because: "does not fit Int")
            try await refused(largest + 1, because: "not exact")
            #expect(b.process.process.isRunning)
            #expect(try await console.request(.call, args: ["service": "counter", "method": "value"]).intValue == 5)
            #expect(try await add(largest - 5) == largest)
            // The count goes on past what an answer can carry: the call says so, the count is kept.
            try await refused(1, because: "beyond ±\(largest)")
            #expect(try await add(-1) == largest)
            // 1,024 of the largest deltas take the count to Int.max - 1,023; the next one would overflow.
            for _ in 0..<1_023 { try await refused(largest, because: "beyond ±\(largest)") }
            try await refused(largest, because: "overflow")
            #expect(b.process.process.isRunning)
            try await refused(-largest, because: "beyond ±\(largest)")
        }
    }
}
