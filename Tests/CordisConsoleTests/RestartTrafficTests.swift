import CordisJSON
import CordisProcessTesting
import Foundation
import Testing

/// `restart NODE:ENTRY` and `traffic` with real nodes: a failed plugin recovered, the change audited,
/// a viewer and `--require-signed-trees` refused; messages counted per node and kind.
@Suite("restart and traffic", .serialized)
struct RestartTrafficTests {
    static let entries = #"{"version":1,"entries":[{"id":"clock","plugin":"clock"},{"id":"flaky","plugin":"flaky","config":{"fail":true,"times":1}},{"id":"broken","plugin":"flaky","config":{"fail":true}},{"id":"off","plugin":"clock","disabled":true}]}"#

    static func entryState(_ status: JSONValue, _ node: String, _ entry: String) -> JSONValue? {
        ConsoleClusterTests.node(status, node)?["entries"]?.arrayValue?.first { $0["id"]?.stringValue == entry }?["state"]
    }

    @Test("restart recovers a plugin that failed once, says when one fails again, and is audited with the operator")
    func restartRecoversAFailedPlugin() async throws {
        let cluster = try Cluster()
        defer { Task { await cluster.stop() } }
        let a = try await cluster.start("a", entries: Self.entries)
        _ = try await ConsoleClusterTests.awaitStatus(cluster, through: "a", "flaky failed") {
            Self.entryState($0, "a", "flaky") == "failed" && Self.entryState($0, "a", "broken") == "failed"
        }
        let restarted = try await cluster.console("a", ["restart", "a:flaky"])
        #expect(restarted.code == 0, "\(restarted)")
        #expect(restarted.out == "a:flaky active\n")
        #expect(await a.waitForLine(containing: "flaky running"))
        let again = try await cluster.console("a", ["restart", "a:broken"])
        #expect(again.code == 1, "\(again)")
        #expect(again.out.contains("a:broken failed") && again.out.contains("flaky failed as its config asks"), "\(again.out)")
        let clock = try await cluster.console("a", ["--json", "restart", "a:clock"])
        #expect(clock.code == 0)
        #expect(try JSONParser().parse(Array(clock.out.utf8))["state"] == "active")
        #expect(await a.waitForLine(containing: "clock stopped"))
        let off = try await cluster.console("a", ["restart", "a:off"])
        #expect(off.code == 1)
        #expect(off.err.contains("no fiber to restart"), "\(off.err)")
        let unknown = try await cluster.console("a", ["restart", "a:nope"])
        #expect(unknown.code == 1)
        #expect(unknown.err.contains("unknown entry \"nope\""), "\(unknown.err)")
        let events = try await cluster.console("a", ["events"])
        #expect(events.out.contains("restart entry flaky applied"), "\(events.out)")
        #expect(events.out.contains("restart entry off refused"), "\(events.out)")
        #expect(a.text.contains("restart entry flaky"))
    }

    @Test("restart needs the operator role, and a node that accepts only signed trees refuses it")
    func restartIsAChange() async throws {
        let cluster = try Cluster()
        defer { Task { await cluster.stop() } }
        try await cluster.start("a", entries: Self.entries, extra: try OperatorRoleTests.operators(cluster, "a", [OperatorRoleTests.uid: "viewer"]))
        let viewer = try await cluster.console("a", ["restart", "a:clock"])
        #expect(viewer.code == 1)
        #expect(viewer.err == "error: restart needs the operator role; you are viewer\n")
        let folder = cluster.folder
        #expect(await runShell("openssl genpkey -algorithm ed25519 -out \(folder.path("admin.pem")) 2>/dev/null") == 0)
        #expect(await runShell("openssl pkey -in \(folder.path("admin.pem")) -pubout -out \(folder.path("trusted.pem"))") == 0)
        try await cluster.start("b", entries: Self.entries, extra: ["--trusted-keys", folder.path("trusted.pem"), "--require-signed-trees"])
        let signedOnly = try await cluster.console("b", ["restart", "b:clock"])
        #expect(signedOnly.code == 1)
        #expect(signedOnly.err.contains("accepts only signed trees"), "\(signedOnly.err)")
    }

    @Test("traffic counts each node's messages by kind, through one node, and names a member nobody knows")
    func trafficThroughOneNode() async throws {
        let cluster = try Cluster()
        defer { Task { await cluster.stop() } }
        let a = try await cluster.start("a", entries: #"{"version":1,"entries":[]}"#)
        try await cluster.start("b", entries: #"{"version":1,"entries":[]}"#, peers: ["a"])
        #expect(await a.waitForLine(containing: "linked to b"))
        let text = try await cluster.console("a", ["traffic"])
        #expect(text.code == 0, "\(text)")
        #expect(text.out.contains("node a") && text.out.contains("node b"), "\(text.out)")
        let heartbeat = try #require(text.out.split(separator: "\n").first { $0.contains("heartbeat") }, "\(text.out)")
        #expect(heartbeat.split(separator: " ").count == 3, "\(heartbeat)")
        let json = try await cluster.console("a", ["--json", "traffic", "--on", "b"])
        #expect(json.code == 0, "\(json)")
        let report = try JSONParser().parse(Array(json.out.utf8))
        #expect(report["nodes"]?["b"]?["node"] == "b")
        #expect((report["nodes"]?["b"]?["received"]?["control"]?.intValue ?? 0) > 0, "\(json.out)")
        let unknown = try await cluster.console("a", ["traffic", "--on", "z"])
        #expect(unknown.code == 1, "\(unknown)")
        #expect(unknown.err.hasPrefix("error: "), "\(unknown.err)")
    }
}
