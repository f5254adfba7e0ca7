import CordisJSON
import CordisProcessTesting
import Foundation
import Testing

/// An entry's config as an operator sees it, with real nodes: in `status` (text and `--json`), printed by
/// `config NODE:ENTRY` without JSON, and a `config` (or `enable`, `add`) that leaves the plugin `failed`
/// exits 1 with the reason, as `restart` does.
@Suite("Entry configs", .serialized)
struct EntryConfigTests {
    static let entriesA = #"{"version":1,"entries":[{"id":"clock","plugin":"clock"},{"id":"counter","plugin":"counter","config":{"start":100}},{"id":"secret","plugin":"counter","disabled":true,"config":{"start":{"$env":"CORDIS_TEST_START","default":3}}},{"id":"tools","plugin":"group","children":[{"id":"flaky","plugin":"flaky","config":{"fail":false}}]}]}"#
    static let entriesB = #"{"version":1,"entries":[{"id":"counter","plugin":"counter","config":{"start":7}}]}"#

    static func entry(_ status: JSONValue, _ node: String, _ id: String) -> JSONValue? {
        ConsoleClusterTests.node(status, node)?["entries"]?.arrayValue?.first { $0["id"]?.stringValue == id }
    }

    @Test("status shows each entry's config as stored, in JSON and text, on every node, an $env reference as a reference")
    func statusShowsStoredConfigs() async throws {
        let cluster = try Cluster()
        defer { Task { await cluster.stop() } }
        let a = try await cluster.start("a", entries: Self.entriesA)
        try await cluster.start("b", entries: Self.entriesB, peers: ["a"])
        #expect(await a.waitForLine(containing: "linked to b"))
        let status = try await ConsoleClusterTests.awaitStatus(cluster, through: "a", "b's counter active") {
            Self.entry($0, "b", "counter")?["state"] == "active"
        }
        #expect(Self.entry(status, "a", "counter")?["config"] == .object(["start": 100]), "\(status)")
        #expect(Self.entry(status, "b", "counter")?["config"] == .object(["start": 7]), "\(status)")
        // An entry without a config shows what its plugin gets: {}.
        #expect(Self.entry(status, "a", "clock")?["config"] == .object([:]), "\(status)")
        #expect(Self.entry(status, "a", "secret")?["config"]?["start"]?["$env"] == "CORDIS_TEST_START", "\(status)")
        #expect(Self.entry(status, "a", "flaky")?["config"] == .object(["fail": false]), "\(status)")
        let text = try await cluster.console("a", ["status"])
        #expect(text.code == 0, "\(text)")
        #expect(text.out.contains(#"counter (counter) active config {"start":100}"#), "\(text.out)")
        #expect(text.out.contains(#"counter (counter) active config {"start":7}"#), "\(text.out)")
    }

    @Test("config NODE:ENTRY without JSON prints the stored config and exits 0; an unknown entry is an error")
    func configWithoutJSONPrintsIt() async throws {
        let cluster = try Cluster()
        defer { Task { await cluster.stop() } }
        let a = try await cluster.start("a", entries: Self.entriesA)
        try await cluster.start("b", entries: Self.entriesB, peers: ["a"])
        #expect(await a.waitForLine(containing: "linked to b"))
        let own = try await cluster.console("a", ["config", "a:counter"])
        #expect(own.code == 0, "\(own)")
        #expect(own.out == "{\"start\":100}\n", "\(own)")
        #expect(own.err.isEmpty, "\(own)")
        // Another member's, relayed by the node reached.
        let relayed = try await cluster.console("a", ["config", "b:counter"])
        #expect(relayed.code == 0, "\(relayed)")
        #expect(relayed.out == "{\"start\":7}\n", "\(relayed)")
        let json = try await cluster.console("a", ["--json", "config", "a:flaky"])
        #expect(json.code == 0, "\(json)")
        #expect(try JSONParser().parse(Array(json.out.utf8)) == .object(["fail": false]), "\(json)")
        let reference = try await cluster.console("a", ["config", "a:secret"])
        #expect(reference.code == 0, "\(reference)")
        #expect(try JSONParser().parse(Array(reference.out.utf8))["start"]?["$env"] == "CORDIS_TEST_START", "\(reference)")
        let none = try await cluster.console("a", ["config", "a:clock"])
        #expect(none.out == "{}\n", "\(none)")
        // What `config` prints is what `config` takes: set back, nothing changes.
        let again = try await cluster.console("a", ["config", "a:counter", own.out.trimmingCharacters(in: .whitespacesAndNewlines)])
        #expect(again.code == 0 && again.out == "a:counter active\n", "\(again)")
        let unknown = try await cluster.console("a", ["config", "a:nope"])
        #expect(unknown.code == 1, "\(unknown)")
        #expect(unknown.err == "error: unknown entry \"nope\" on a\n", "\(unknown)")
        let tooMany = try await cluster.console("a", ["config", "a:counter", "{}", "{}"])
        #expect(tooMany.code == 64, "\(tooMany)")
        #expect(tooMany.err.hasPrefix("error: config takes NODE:ENTRY [JSON]"), "\(tooMany)")
    }

    @Test("a config, enable or add that leaves the plugin failed exits 1 with the reason, as restart does; one that recovers it exits 0")
    func aChangeThatFailsThePluginExits1() async throws {
        let cluster = try Cluster()
        defer { Task { await cluster.stop() } }
        try await cluster.start("a", entries: Self.entriesA)
        let failed = try await cluster.console("a", ["config", "a:flaky", #"{"fail":true}"#])
        #expect(failed.code == 1, "\(failed)")
        #expect(failed.out.contains("a:flaky failed") && failed.out.contains("flaky failed as its config asks"), "\(failed)")
        let failedJSON = try await cluster.console("a", ["--json", "config", "a:flaky", #"{"fail":true,"times":5}"#])
        #expect(failedJSON.code == 1, "\(failedJSON)")
        #expect(try JSONParser().parse(Array(failedJSON.out.utf8))["state"] == "failed", "\(failedJSON)")
        let recovered = try await cluster.console("a", ["config", "a:flaky", #"{"fail":false}"#])
        #expect(recovered.code == 0, "\(recovered)")
        #expect(recovered.out == "a:flaky active\n", "\(recovered)")
        let added = try await cluster.console("a", ["add", "a", "--id", "bad", "--plugin", "flaky", "--config", #"{"fail":true}"#, "--disabled"])
        #expect(added.code == 0, "\(added)")
        let enabled = try await cluster.console("a", ["enable", "a:bad"])
        #expect(enabled.code == 1, "\(enabled)")
        #expect(enabled.out.contains("a:bad failed"), "\(enabled)")
        let addedFailing = try await cluster.console("a", ["add", "a", "--id", "worse", "--plugin", "flaky", "--config", #"{"fail":true}"#])
        #expect(addedFailing.code == 1, "\(addedFailing)")
        #expect(addedFailing.out.contains("a:worse failed"), "\(addedFailing)")
    }
}
