import CordisProcessTesting
import CordisJSON
import Foundation
import Testing

/// `cordis-console` against real `cordis-node` processes.
@Suite("cordis-console with real nodes", .serialized)
struct ConsoleClusterTests {
    static let entriesA = #"{"version":1,"entries":[{"id":"clock","plugin":"clock"},{"id":"off","plugin":"counter","disabled":true}]}"#
    static let entriesB = #"{"version":1,"entries":[{"id":"greeter","plugin":"greeter"},{"id":"bad","plugin":"nope"}]}"#

    /// Runs `status --json` through `node` until `predicate` holds (bounded by a deadline).
    static func awaitStatus(
        _ cluster: Cluster, through node: String, _ what: String, deadline: Duration = .seconds(20),
        _ predicate: (JSONValue) -> Bool
    ) async throws -> JSONValue {
        let clock = ContinuousClock()
        let end = clock.now + deadline
        var last = ConsoleResult(code: -1, out: "", err: "")
        while clock.now < end {
            last = try await cluster.console(node, ["status", "--json"])
            if let json = try? JSONParser().parse(Array(last.out.utf8)), predicate(json) { return json }
        }
        Issue.record("timed out waiting for \(what); last status (\(last.code)): \(last.out) \(last.err)")
        return .null
    }

    static func node(_ status: JSONValue, _ name: String) -> JSONValue? {
        status["nodes"]?.arrayValue?.first { $0["name"]?.stringValue == name }
    }

    static func fiber(_ status: JSONValue, _ node: String, entry: String) -> JSONValue? {
        Self.node(status, node)?["fibers"]?.arrayValue?.first { $0["entry"]?.stringValue == entry }
    }

    @Test("status --json shows a cluster through one node: entries without fibers, proxies, cross-node providers, exit 3 for an entry error")
    func statusSchemaThroughOneNode() async throws {
        let cluster = try Cluster()
        defer { Task { await cluster.stop() } }
        try await cluster.start("a", entries: Self.entriesA)
        let b = try await cluster.start("b", entries: Self.entriesB, peers: ["a"])
        _ = b
        let status = try await Self.awaitStatus(cluster, through: "a", "b's greeter active") {
            Self.fiber($0, "b", entry: "greeter")?["state"] == "active"
        }
        let a = try #require(Self.node(status, "a"))
        #expect(a["reachable"] == true)
        #expect(a["incarnation"]?.stringValue?.isEmpty == false)
        #expect(a["version"]?.stringValue != nil)
        #expect(a["addresses"] == [.string(cluster.address("a"))])
        let off = try #require(a["entries"]?.arrayValue?.first { $0["id"] == "off" })
        #expect(off == ["id": "off", "plugin": "counter", "parent": nil, "disabled": true, "config": [:], "state": nil, "error": nil])
        let clock = try #require(Self.fiber(status, "a", entry: "clock"))
        #expect(clock["provides"] == [["service": "clock", "realm": nil]])
        let greeter = try #require(Self.fiber(status, "b", entry: "greeter"))
        #expect(greeter["injects"]?["clock"]?["node"] == "a")
        #expect(greeter["injects"]?["clock"]?["fiber"] == clock["fiber"])
        #expect(greeter["missing"] == [])
        let nodeB = try #require(Self.node(status, "b"))
        let proxy = try #require(nodeB["fibers"]?.arrayValue?.first { $0["plugin"] == "remote:clock" })
        #expect(proxy["entry"] == .null)
        let bad = try #require(nodeB["entries"]?.arrayValue?.first { $0["id"] == "bad" })
        #expect(bad["state"] == .null)
        #expect(bad["error"]?.stringValue?.contains("nope") == true)
        let result = try await cluster.console("a", ["status"])
        #expect(result.code == 3)
        #expect(!result.out.contains("\u{1B}"))
        #expect(result.out.contains("node b"))
    }

    @Test("graph --format dot is valid Graphviz with a cluster per node and a cross-node edge")
    func dotRendersWithGraphviz() async throws {
        let cluster = try Cluster()
        defer { Task { await cluster.stop() } }
        try await cluster.start("a", entries: Self.entriesA)
        try await cluster.start("b", entries: Self.entriesB, peers: ["a"])
        let status = try await Self.awaitStatus(cluster, through: "b", "greeter active") {
            Self.fiber($0, "b", entry: "greeter")?["state"] == "active"
        }
        let clockFiber = try #require(Self.fiber(status, "a", entry: "clock")?["fiber"]?.intValue)
        let greeterFiber = try #require(Self.fiber(status, "b", entry: "greeter")?["fiber"]?.intValue)
        let result = try await cluster.console("b", ["graph", "--format", "dot"])
        #expect(result.code == 0)
        #expect(result.out.contains("subgraph \"cluster_a\""))
        #expect(result.out.contains("subgraph \"cluster_b\""))
        #expect(result.out.contains("\"b/\(greeterFiber)\" -> \"a/\(clockFiber)\""))
        let dot = "/usr/bin/dot"
        guard FileManager.default.isExecutableFile(atPath: dot) else {
            print("skipping the Graphviz rendering: \(dot) is not installed (apt-get install graphviz)")
            return
        }
        try cluster.folder.write("graph.dot", result.out)
        let (render, errors) = try await ChildProcess.run(
            URL(fileURLWithPath: dot), ["-Tsvg", "-o", cluster.folder.path("graph.svg"), cluster.folder.path("graph.dot")],
            deadline: .seconds(60))
        #expect(render?.status == 0, "dot: \(errors)")
        let svg = try String(contentsOfFile: cluster.folder.path("graph.svg"), encoding: .utf8)
        #expect(svg.contains("<svg"))
    }

    @Test("each changing command waits until settled, prints the resulting state and saves; events show the changes")
    func changingCommands() async throws {
        let cluster = try Cluster()
        defer { Task { await cluster.stop() } }
        try await cluster.start("a", entries: Self.entriesA)
        try await cluster.start("b", entries: #"{"version":1,"entries":[]}"#, peers: ["a"])
        _ = try await Self.awaitStatus(cluster, through: "a", "b linked") { Self.node($0, "b")?["reachable"] == true }

        var result = try await cluster.console("a", ["enable", "a:off"])
        #expect(result.code == 0)
        #expect(result.out == "a:off active\n")
        result = try await cluster.console("a", ["config", "a:off", #"{"start":5}"#])
        #expect(result.out == "a:off active\n")
        result = try await cluster.console("a", ["call", "counter", "value"])
        #expect(result.out == "5\n")
        result = try await cluster.console("a", ["add", "b", "--id", "c2", "--plugin", "counter", "--isolate", "counter=blue"])
        #expect(result.code == 0)
        #expect(result.out == "b:c2 active\n")
        let savedB = try String(contentsOfFile: cluster.entries("b"), encoding: .utf8)
        #expect(savedB.contains(#""isolate": {"#) && savedB.contains(#""counter": "blue""#))
        result = try await cluster.console("a", ["call", "counter", "add", "[2]", "--realm", "blue"])
        #expect(result.out == "2\n")
        result = try await cluster.console("a", ["disable", "b:c2"])
        #expect(result.out == "b:c2 disabled\n")
        result = try await cluster.console("a", ["remove", "b:c2"])
        #expect(result.code == 0)
        #expect(!(try String(contentsOfFile: cluster.entries("b"), encoding: .utf8)).contains("c2"))
        result = try await cluster.console("a", ["events", "--on", "b"])
        #expect(result.code == 0)
        #expect(result.out.contains(" b entry c2 added"))
        #expect(result.out.contains(" b entry c2 removed"))
        // Every event is b's (a line is `TIME NODE …`; b's own view of a, `member a up`, is b's event).
        #expect(result.out.split(separator: "\n").allSatisfy { $0.split(separator: " ").dropFirst().first == "b" }, "\(result.out)")
    }

    @Test("every rejected change prints error naming the entry, exits 1 and leaves the entries file byte for byte", arguments: [
        (["enable", "a:missing"], "missing"),
        (["config", "a:cnt", #"{"start":"x"}"#], "cnt"),
        (["add", "a", "--id", "n1", "--plugin", "nope"], "nope"),
        (["add", "a", "--id", "clock", "--plugin", "clock"], "clock"),
        (["add", "a", "--id", "bad id", "--plugin", "clock"], "bad id"),
        (["remove", "a:missing"], "missing"),
    ])
    func rejections(arguments: [String], named: String) async throws {
        let cluster = try Cluster()
        defer { Task { await cluster.stop() } }
        try await cluster.start("a", entries: #"{"version":1,"entries":[{"id":"clock","plugin":"clock"},{"id":"cnt","plugin":"counter"}]}"#)
        let before = try Data(contentsOf: URL(fileURLWithPath: cluster.entries("a")))
        let result = try await cluster.console("a", arguments)
        #expect(result.code == 1)
        #expect(result.err.hasPrefix("error: "))
        #expect(result.err.contains(named))
        #expect(try Data(contentsOf: URL(fileURLWithPath: cluster.entries("a"))) == before)
    }

    @Test("an unreachable member is listed with what was last seen and exit 3; forget drops it")
    func unreachableThenForget() async throws {
        let cluster = try Cluster()
        defer { Task { await cluster.stop() } }
        try await cluster.start("a", entries: Self.entriesA)
        let b = try await cluster.start("b", entries: #"{"version":1,"entries":[{"id":"greeter","plugin":"greeter"}]}"#, peers: ["a"])
        _ = try await Self.awaitStatus(cluster, through: "a", "greeter active") {
            Self.fiber($0, "b", entry: "greeter")?["state"] == "active"
        }
        var result = try await cluster.console("a", ["forget", "b"])
        #expect(result.code == 1)
        #expect(result.err.contains("stop it"))
        await b.stop()
        let status = try await Self.awaitStatus(cluster, through: "a", "b unreachable") {
            Self.node($0, "b")?["reachable"] == false
        }
        #expect(Self.node(status, "b")?["entries"]?.arrayValue?.first?["id"] == "greeter")
        result = try await cluster.console("a", ["status"])
        #expect(result.code == 3)
        #expect(result.out.contains("unreachable"))
        result = try await cluster.console("a", ["forget", "b"])
        #expect(result.code == 0)
        result = try await cluster.console("a", ["members"])
        #expect(!result.out.contains("b "))
        result = try await cluster.console("a", ["status", "--json"])
        #expect(result.code == 0)
        #expect(!result.out.contains(#""name": "b""#))
        #expect(try await cluster.console("a", ["forget", "zz"]).code == 1)
    }

    @Test("exit codes: 64 for usage, 69 when no node is reachable or the node is silent")
    func exitCodes() async throws {
        let cluster = try Cluster()
        defer { Task { await cluster.stop() } }
        var result = try await runConsole(["status"])
        #expect(result.code == 64)
        #expect(result.err.hasPrefix("error: "))
        result = try await runConsole(["--node", cluster.address("nobody"), "status"])
        #expect(result.code == 69)
        #expect(result.err.hasPrefix("error: "))
        let a = try await cluster.start("a", entries: Self.entriesA)
        result = try await runConsole(["status"], environment: ["CORDIS_CONSOLE_NODE": cluster.address("a")])
        #expect(result.code == 0)
        a.signal(SIGSTOP)
        result = try await cluster.console("a", ["status"], timeout: 1)
        a.signal(SIGCONT)
        #expect(result.code == 69)
        #expect(result.err.hasPrefix("error: timeout"))
    }

    @Test("a node with 1,000 fibers and a 64 KiB frame limit sends its status in pages")
    func thousandFiberStatus() async throws {
        let cluster = try Cluster()
        defer { Task { await cluster.stop() } }
        let entries = (0 ..< 1000).map { #"{"id":"g\#($0)","plugin":"greeter"}"# }.joined(separator: ",")
        try await cluster.start("big", entries: #"{"version":1,"entries":[\#(entries)]}"#, extra: ["--max-frame", "65536"])
        let result = try await cluster.console("big", ["status", "--json"], timeout: 20)
        #expect(result.code == 0, "\(result.err)")
        #expect(result.out.utf8.count > 65536)
        let status = try JSONParser().parse(Array(result.out.utf8))
        let node = try #require(Self.node(status, "big"))
        #expect(node["entries"]?.arrayValue?.count == 1000)
        #expect(node["fibers"]?.arrayValue?.count == 1000)
        #expect(Set(node["fibers"]?.arrayValue?.compactMap { $0["entry"]?.stringValue } ?? []).count == 1000)
    }
}
