import CordisControl
import CordisJSON
import CordisWire
import Foundation
import Testing

/// Timeouts out of range are refused where they are given and clamped where they are relayed: no
/// number on a command line or in a request traps the console or a node.
@Suite("Timeout range checks", .serialized)
struct TimeoutRangeTests {
    @Test("--timeout 1e300, nan, inf, 0 and -1 are usage errors (exit 64), not a crash", arguments: ["1e300", "nan", "inf", "0", "-1"])
    func hugeConsoleTimeoutIsUsage(value: String) async throws {
        let result = try await runConsole(["--node", "unix:/tmp/cordis-nobody.sock", "--timeout", value, "status"])
        #expect(result.code == 64, "\(result.err)")
        #expect(result.err.hasPrefix("error: --timeout"))
    }

    @Test("a node answers a request that announces a timeout of 1e300 seconds and stays up")
    func hugeRequestTimeoutIsClamped() async throws {
        let cluster = try Cluster()
        defer { Task { await cluster.stop() } }
        let node = try await cluster.start("a", entries: #"{"version":1,"entries":[{"id":"clock","plugin":"clock"}]}"#)
        let client = try await ControlClient.connect(to: Address(parsing: cluster.address("a")), name: "range-test")
        for announced in [1e300, -1e300, Double.infinity, -Double.infinity, Double.nan, 1.2e16] {
            let status = try await client.request(
                named: "status", args: ["cluster": true], timeout: .seconds(10), announcing: announced)
            #expect(StatusPaging.join(status)["nodes"]?.arrayValue?.first?["name"] == "a", "timeout \(announced)")
        }
        await client.close()
        #expect(node.process.isRunning)
        let after = try await cluster.console("a", ["status", "--json"])
        #expect(after.code == 0, "\(after.err)")
    }

    @Test("relayed timeouts are clamped to the range and parsed ones are checked")
    func conversions() throws {
        #expect(ControlTimeout.clamped(1e300) == .seconds(ControlTimeout.maximumSeconds))
        #expect(ControlTimeout.clamped(-5) == .milliseconds(50))
        #expect(ControlTimeout.clamped(.nan) == .seconds(10))
        #expect(ControlTimeout.clamped(nil) == .seconds(10))
        #expect(ControlTimeout.clamped(2.5) == .milliseconds(2500))
        #expect(try ControlTimeout.parse(1.5) == .milliseconds(1500))
        for bad in [0, -1, 1e300, .infinity, .nan, ControlTimeout.maximumSeconds * 2] {
            #expect(throws: ControlTimeoutError.self) { try ControlTimeout.parse(bad) }
        }
    }
}
