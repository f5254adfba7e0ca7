import CordisJSON
import CordisProcessTesting
import Foundation
import Testing

/// Operators and roles with real nodes: a console's role comes from the node's operators file (here
/// by the test's own uid on a Unix socket), a refused command names the role it needs, an unlisted
/// console is refused at the handshake, a relayed request is checked by the node that runs it, the
/// file is re-read on SIGHUP, and every change shows in `events` with who made it.
@Suite("Operators and roles", .serialized)
struct OperatorRoleTests {
    static let entries = #"{"version":1,"entries":[{"id":"clock","plugin":"clock"}]}"#
    static var uid: String { "uid:\(getuid())" }

    static func operators(_ cluster: Cluster, _ name: String, _ roles: [String: String]) throws -> [String] {
        let body = roles.map { "\"\($0.key)\": \"\($0.value)\"" }.joined(separator: ", ")
        try cluster.folder.write("\(name)-operators.json", "{\(body)}")
        return ["--operators", cluster.folder.path("\(name)-operators.json")]
    }

    static func bytes(_ path: String) throws -> Data { try Data(contentsOf: URL(fileURLWithPath: path)) }

    @Test("a viewer may read, but its disable is refused with the role it needs, exits 1 and changes nothing")
    func viewerCannotChange() async throws {
        let cluster = try Cluster()
        defer { Task { await cluster.stop() } }
        let a = try await cluster.start("a", entries: Self.entries, extra: try Self.operators(cluster, "a", [Self.uid: "viewer"]))
        let before = try Self.bytes(cluster.entries("a"))
        let status = try await cluster.console("a", ["status"])
        #expect(status.code == 0, "\(status.err)")
        let refused = try await cluster.console("a", ["disable", "a:clock"])
        #expect(refused.code == 1)
        #expect(refused.err == "error: disable needs the operator role; you are viewer\n")
        #expect(try Self.bytes(cluster.entries("a")) == before)
        #expect(await a.waitForLine(containing: "refused: "))
        #expect(a.text.contains("disable entry clock: disable needs the operator role"))
        let call = try await cluster.console("a", ["call", "clock", "now"])
        #expect(call.code == 1)
        #expect(call.err == "error: call needs the operator role; you are viewer\n")
        let forget = try await cluster.console("a", ["forget", "z"])
        #expect(forget.err == "error: forget needs the admin role; you are viewer\n")
    }

    @Test("a console the operators file does not list is refused at the handshake and learns nothing")
    func unlistedConsoleIsRefused() async throws {
        let cluster = try Cluster()
        defer { Task { await cluster.stop() } }
        let a = try await cluster.start("a", entries: Self.entries, extra: try Self.operators(cluster, "a", ["uid:4000000000": "admin"]))
        let result = try await cluster.console("a", ["status", "--json"])
        #expect(result.code == 69)
        #expect(result.out.isEmpty)
        #expect(result.err.contains("not admitted"), "\(result.err)")
        #expect(!result.err.contains("clock"))
        #expect(await a.waitForLine(containing: "not listed in the operators file"))
    }

    @Test("a relayed change is checked by the node that runs it, and its event names the operator")
    func relayedRequestsAreCheckedWhereTheyRun() async throws {
        let cluster = try Cluster()
        defer { Task { await cluster.stop() } }
        try await cluster.start("a", entries: Self.entries, extra: try Self.operators(cluster, "a", [Self.uid: "operator"]))
        let b = try await cluster.start(
            "b", entries: Self.entries, peers: ["a"], extra: try Self.operators(cluster, "b", [Self.uid: "viewer"]))
        #expect(await b.waitForLine(containing: "linked to a"))
        let before = try Self.bytes(cluster.entries("b"))
        let refused = try await cluster.console("a", ["disable", "b:clock"])
        #expect(refused.code == 1)
        #expect(refused.err == "error: disable needs the operator role; you are viewer\n")
        #expect(try Self.bytes(cluster.entries("b")) == before)
        let applied = try await cluster.console("a", ["disable", "a:clock"])
        #expect(applied.code == 0, "\(applied.err)")
        let events = try await cluster.console("a", ["events", "--json"])
        let changes = events.out.split(separator: "\n").compactMap { try? JSONParser().parse(Array($0.utf8)) }
            .filter { $0["kind"] == "change" }
        let user = try #require(changes.first { $0["node"] == "a" })
        #expect(user["detail"]?["outcome"] == "applied")
        #expect(user["detail"]?["change"] == "disable entry clock")
        let name = try #require(user["detail"]?["operator"]?.stringValue)
        #expect(!name.isEmpty && name != "cluster")
        let onB = try #require(changes.first { $0["node"] == "b" })
        #expect(onB["detail"]?["outcome"] == "refused")
        #expect(onB["detail"]?["operator"]?.stringValue == name)
        #expect(onB["detail"]?["peer"] == "member a")
        let text = try await cluster.console("a", ["events"])
        #expect(text.out.contains("change by \(name) via "), "\(text.out)")
    }

    @Test("SIGHUP re-reads the operators file; a file that does not parse leaves the roles in force")
    func hangupReloadsOperators() async throws {
        let cluster = try Cluster()
        defer { Task { await cluster.stop() } }
        let a = try await cluster.start("a", entries: Self.entries, extra: try Self.operators(cluster, "a", [Self.uid: "viewer"]))
        #expect(try await cluster.console("a", ["disable", "a:clock"]).code == 1)
        _ = try Self.operators(cluster, "a", [Self.uid: "operator"])
        a.signal(SIGHUP)
        #expect(await a.waitForLine(containing: "reloaded the operators file"))
        let applied = try await cluster.console("a", ["disable", "a:clock"])
        #expect(applied.code == 0, "\(applied.err)")
        try cluster.folder.write("a-operators.json", #"{"uid:1": "superuser"}"#)
        a.signal(SIGHUP)
        #expect(await a.waitForLine(containing: "operators reload refused"))
        #expect(a.text.contains("must be \"viewer\", \"operator\" or \"admin\""))
        #expect(try await cluster.console("a", ["enable", "a:clock"]).code == 0)
    }
}
