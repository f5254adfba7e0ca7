import CordisJSON
import CordisProcessTesting
import Foundation
import Testing
@testable import CordisConsole

/// A dependency cycle is shown where operators look: a real node whose entries make `clock` and
/// `counter` inject each other reports both `pending` with the cycle in `status` (text and JSON) and in
/// `graph`, printed by the real console.
@Suite("Dependency cycles in the console", .serialized)
struct DependencyCycleStatusTests {
    /// `clock` injects `counter` and `counter` injects `clock` (entry `inject`): neither can ever load.
    static let cycle = """
        {"version":1,"entries":[
          {"id":"clock","plugin":"clock","inject":["counter"]},
          {"id":"counter","plugin":"counter","inject":["clock"]},
          {"id":"greeter","plugin":"greeter"}]}
        """

    @Test("status and graph name the cycle a pending entry waits for, in text and in --json")
    func statusNamesTheCycle() async throws {
        let cluster = try Cluster()
        defer { Task { await cluster.stop() } }
        try await cluster.start("a", entries: Self.cycle)
        let json = try await ConsoleClusterTests.awaitStatus(cluster, through: "a", "clock waiting for a cycle") {
            ConsoleClusterTests.fiber($0, "a", entry: "clock")?["cycle"] != nil
        }
        let clock = try #require(ConsoleClusterTests.fiber(json, "a", entry: "clock"))
        #expect(clock["state"] == "pending")
        #expect(clock["cycle"] == .array(["counter", "clock", "counter"]), "\(clock)")
        let entries = ConsoleClusterTests.node(json, "a")?["entries"]?.arrayValue ?? []
        let clockEntry = try #require(entries.first { $0["id"] == "clock" })
        #expect(clockEntry["waiting"] == "waits for counter → clock → counter", "\(clockEntry)")
        // A consumer of a service the cycle holds waits for the cycle too; its entry says so.
        let greeterEntry = try #require(entries.first { $0["id"] == "greeter" })
        #expect(greeterEntry["waiting"] == "waits for clock → counter → clock", "\(greeterEntry)")

        let status = try await cluster.console("a", ["status"])
        #expect(status.code == 0, "\(status)")
        #expect(status.out.contains("clock (clock) pending waits for counter → clock → counter"), "\(status.out)")
        #expect(status.out.contains("counter (counter) pending waits for clock → counter → clock"), "\(status.out)")
        #expect(
            status.out.contains("[clock] pending waits for a dependency cycle: counter → clock → counter"),
            "\(status.out)")
        let graph = try await cluster.console("a", ["graph"])
        #expect(graph.code == 0, "\(graph)")
        #expect(graph.out.contains("waits for a dependency cycle: clock → counter → clock"), "\(graph.out)")
        // The report quotes what the console printed.
        print("cordis-console status:\n\(status.out)cordis-console graph:\n\(graph.out)")
    }

    @Test("fixing the entry that closes the cycle clears it: the entries load and status says nothing of a cycle")
    func breakingTheCycleClearsIt() async throws {
        let cluster = try Cluster()
        defer { Task { await cluster.stop() } }
        let node = try await cluster.start("a", entries: Self.cycle)
        _ = try await ConsoleClusterTests.awaitStatus(cluster, through: "a", "clock waiting for a cycle") {
            ConsoleClusterTests.fiber($0, "a", entry: "clock")?["cycle"] != nil
        }
        try cluster.folder.write("a.json", """
            {"version":1,"entries":[
              {"id":"clock","plugin":"clock"},
              {"id":"counter","plugin":"counter","inject":["clock"]},
              {"id":"greeter","plugin":"greeter"}]}
            """)
        node.signal(SIGHUP)
        let json = try await ConsoleClusterTests.awaitStatus(cluster, through: "a", "every entry active") {
            ($0["nodes"]?.arrayValue?.first?["fibers"]?.arrayValue ?? []).allSatisfy { $0["state"] == "active" }
        }
        let entries = ConsoleClusterTests.node(json, "a")?["entries"]?.arrayValue ?? []
        #expect(entries.allSatisfy { $0["waiting"] == nil }, "\(entries)")
        let status = try await cluster.console("a", ["status"])
        #expect(!status.out.contains("waits for"), "\(status.out)")
    }
}
