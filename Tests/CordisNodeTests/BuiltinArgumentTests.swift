import CordisNode
import CordisWire
import Foundation
import Testing

/// The built-in services take their arguments from the wire: no argument a console or a peer sends may
/// stop the node that provides them.
@Suite("Built-in services: hostile arguments")
struct BuiltinArgumentTests {
    @Test("counter.add past Int.max or Int.min is refused with an error, and the node keeps counting")
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
            func refused(_ delta: Int) async throws {
                do {
                    let value = try await add(delta)
                    Issue.record("add(\(delta)) was accepted: \(String(describing: value))")
                } catch let failure as ControlFailure {
                    #expect(failure.message.contains("overflow"), "\(failure)")
                }
            }
            try await refused(Int.max)
            #expect(b.process.process.isRunning)
            #expect(try await console.request(.call, args: ["service": "counter", "method": "value"]).intValue == 5)
            #expect(try await add(Int.min) == Int.min + 5)
            try await refused(Int.min)
            #expect(try await add(Int.max) == 4)
            #expect(b.process.process.isRunning)
        }
    }
}
