import CordisJSON
import Foundation
import Testing

/// The JSON `cordis-console` prints from real nodes keeps its members in the documented order
/// (`JSONValue` equality ignores key order, so the other console tests cannot tell).
@Suite("cordis-console JSON member order", .serialized)
struct ConsoleJSONShapeTests {
    static let nodeKeys = ["name", "addresses", "incarnation", "version", "reachable", "entries", "fibers", "health"]
    static let entryKeys = ["id", "plugin", "parent", "disabled", "config", "state", "error"]
    static let fiberKeys = ["fiber", "entry", "plugin", "state", "provides", "injects", "missing", "error"]
    /// A proxy's fiber names the node it stands for, after its plugin.
    static let proxyKeys = ["fiber", "entry", "plugin", "origin", "state", "provides", "injects", "missing", "error"]
    static let providerKeys = ["node", "entry", "fiber", "realm"]

    static func keys(_ value: JSONValue?) -> [String] { value?.objectValue?.keys ?? [] }

    static func parse(_ text: String) throws -> JSONValue { try JSONParser().parse(Array(text.utf8)) }

    @Test("status, members, catalog and events --json write their members in the documented order")
    func memberOrder() async throws {
        let cluster = try Cluster()
        defer { Task { await cluster.stop() } }
        try await cluster.start("a", entries: ConsoleClusterTests.entriesA)
        try await cluster.start("b", entries: ConsoleClusterTests.entriesB, peers: ["a"])
        let status = try await ConsoleClusterTests.awaitStatus(cluster, through: "a", "b's greeter active") {
            ConsoleClusterTests.fiber($0, "b", entry: "greeter")?["state"] == "active"
        }
        let nodes = try #require(status["nodes"]?.arrayValue)
        #expect(nodes.count == 2)
        for node in nodes {
            #expect(Self.keys(node) == Self.nodeKeys)
            for entry in node["entries"]?.arrayValue ?? [] { #expect(Self.keys(entry) == Self.entryKeys) }
            for fiber in node["fibers"]?.arrayValue ?? [] {
                let proxy = fiber["plugin"]?.stringValue?.hasPrefix("remote:") == true
                #expect(Self.keys(fiber) == (proxy ? Self.proxyKeys : Self.fiberKeys))
                for slot in fiber["provides"]?.arrayValue ?? [] { #expect(Self.keys(slot) == ["service", "realm"]) }
                for provider in fiber["injects"]?.objectValue?.values ?? [] where provider != .null {
                    #expect(Self.keys(provider) == Self.providerKeys)
                }
            }
        }
        let greeter = try #require(ConsoleClusterTests.fiber(status, "b", entry: "greeter"))
        #expect(Self.keys(greeter["injects"]) == ["clock"])
        // The proxy b uses for a's clock names a as its origin.
        let bFibers = nodes.first { $0["name"] == "b" }?["fibers"]?.arrayValue ?? []
        let proxy = bFibers.first { $0["plugin"] == "remote:clock" }
        #expect(proxy?["origin"] == "a", "\(bFibers)")

        let members = try Self.parse(try await cluster.console("a", ["members", "--json"]).out)
        #expect(Self.keys(members) == ["members"])
        #expect(members["members"]?.arrayValue?.count == 2)
        for member in members["members"]?.arrayValue ?? [] {
            #expect(Self.keys(member) == ["name", "addresses", "incarnation", "self", "reachable", "health", "linked"])
        }

        let catalog = try Self.parse(try await cluster.console("a", ["catalog", "--on", "a", "--json"]).out)
        let plugins = try #require(catalog["nodes"]?["a"]?.arrayValue)
        let counter = try #require(plugins.first { $0["name"] == "counter" })
        #expect(Self.keys(counter) == ["name", "injects", "provides", "config"])
        #expect(Self.keys(counter["config"]?.arrayValue?.first) == ["path", "type", "optional"])

        let events = try await cluster.console("a", ["events", "--json"])
        #expect(events.code == 0)
        let lines = events.out.split(separator: "\n")
        #expect(!lines.isEmpty)
        for line in lines {
            let event = try Self.parse(String(line))
            #expect(Self.keys(event) == ["node", "time", "kind", "detail"])
        }
    }
}
