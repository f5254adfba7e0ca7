import CordisJSON
import CordisProcessTesting
import Foundation
import Testing

/// `cordis-console status --on NODE`: one member's status, through the node reached.
@Suite("cordis-console status --on NODE", .serialized)
struct StatusOnTests {
    @Test("status --on NODE shows that member only, relayed; unknown is exit 1, unreachable exit 3 with its health")
    func statusOnOneNode() async throws {
        let cluster = try Cluster()
        defer { Task { await cluster.stop() } }
        try await cluster.start("a", entries: ConsoleClusterTests.entriesA)
        let b = try await cluster.start("b", entries: ConsoleClusterTests.entriesB, peers: ["a"])
        _ = try await ConsoleClusterTests.awaitStatus(cluster, through: "a", "b's greeter active") {
            ConsoleClusterTests.fiber($0, "b", entry: "greeter")?["state"] == "active"
        }
        let json = try await cluster.console("a", ["--json", "status", "--on", "b"])
        // b's entry "bad" has an unknown plugin: a problem, exit 3, as for the whole cluster.
        #expect(json.code == 3, "\(json)")
        let parsed = try JSONParser().parse(Array(json.out.utf8))
        #expect(parsed["nodes"]?.arrayValue?.compactMap { $0["name"]?.stringValue } == ["b"], "\(json.out)")
        #expect(parsed["nodes"]?.arrayValue?.first?["health"] == "up", "\(json.out)")
        let own = try await cluster.console("a", ["status", "--on", "a"])
        #expect(own.code == 0 && own.out.hasPrefix("node a") && !own.out.contains("node b"), "\(own)")
        let unknown = try await cluster.console("a", ["status", "--on", "nobody"])
        #expect(unknown.code == 1 && unknown.err.contains("nobody"), "\(unknown)")
        let bad = try await cluster.console("a", ["status", "--on", "not a name"])
        #expect(bad.code == 64, "\(bad)")
        b.signal(SIGKILL)
        _ = await b.exitCode()
        var down = try await cluster.console("a", ["status", "--on", "b"])
        let deadline = ContinuousClock.now + .seconds(20)
        while !down.out.contains("down, unreachable"), ContinuousClock.now < deadline {
            down = try await cluster.console("a", ["status", "--on", "b"])
        }
        #expect(down.code == 3 && down.out.hasPrefix("node b") && down.out.contains("down, unreachable"), "\(down)")
        #expect(!down.out.contains("node a"), "\(down)")
    }
}
