import Cordis
import CordisNode
import CordisWire
import Foundation
import Testing

/// Numbers in a call's arguments come from the wire: one that does not fit the method's parameter
/// exactly is refused with `invalid-arguments` by the node that serves the call, which keeps running
/// and keeps its state.
@Suite("Remote calls: numbers out of range")
struct RemoteNumberArgumentTests {
    @Test("counter.add with a number JSON carries only rounded, or out of Int's range, is refused")
    func inexactOrHugeDeltaIsRefused() async throws {
        try await TestCluster.run { cluster in
            let b = try await cluster.start("b", entries: #"[{"id": "counter", "plugin": "counter", "config": {"start": 5}}]"#)
            let console = try await cluster.control(b)
            try #require(try await console.awaitFiber(ofEntry: "counter", inState: "active") != nil)

            func add(_ delta: JSONValue) async throws -> JSONValue {
                try await console.request(
                    .call, args: ["service": "counter", "method": "add", "args": .object(["_0": delta])])
            }
            // -9223372036854775809 travels as the double -2^63: taken, it would add Int.min.
            for delta: JSONValue in [.number(-9.223372036854775808e18), .number(1e300), .number(1e18), .number(9_007_199_254_740_992)] {
                do {
                    let value = try await add(delta)
                    Issue.record("add(\(delta)) was accepted: \(value)")
                } catch let failure as ControlFailure {
                    #expect(failure.message.contains("invalid-arguments") || failure.code == "invalid-arguments", "\(failure)")
                }
            }
            #expect(b.process.process.isRunning)
            #expect(try await console.request(.call, args: ["service": "counter", "method": "value"]).intValue == 5)
            #expect(try await add(.number(3.0)).intValue == 8)
        }
    }
}
