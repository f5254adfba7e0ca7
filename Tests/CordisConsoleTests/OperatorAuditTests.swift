import CordisControl
import CordisJSON
import CordisWire
import CordisProcessTesting
import Foundation
import Testing

/// Who an operator is and what is recorded of it, with real nodes: on a Unix socket the operator is
/// its user even when it also proves the secret, a change the Loader refuses is audited like one it
/// applies, and a cluster-wide `status` or `events` shows another member only when that member's own
/// operators file admits the operator.
@Suite("Operator identity and audit", .serialized)
struct OperatorAuditTests {
    static let entries = #"{"version":1,"entries":[{"id":"clock","plugin":"clock"}]}"#
    static var uid: String { "uid:\(getuid())" }

    static func secret(_ cluster: Cluster) throws -> String {
        try cluster.folder.write("secret", String(repeating: "s", count: 40))
        let secret = cluster.folder.path("secret")
        chmod(secret, 0o600)
        return secret
    }

    static func changes(_ output: String) -> [JSONValue] {
        output.split(separator: "\n").compactMap { try? JSONParser().parse(Array($0.utf8)) }.filter { $0["kind"] == "change" }
    }

    /// The events `client` receives up to the first that `done` accepts, or all of them by a 10 s deadline.
    static func events(of client: ControlClient, until done: @escaping @Sendable (ControlEvent) -> Bool) async -> [ControlEvent] {
        await withTaskGroup(of: [ControlEvent]?.self) { group in
            group.addTask {
                var seen: [ControlEvent] = []
                for await event in client.events {
                    seen.append(event)
                    if done(event) { break }
                }
                return seen
            }
            group.addTask {
                try? await Task.sleep(for: .seconds(10))
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first ?? []
        }
    }

    @Test("on a Unix socket a console that proves the secret is its user, not cluster")
    func unixConsoleIsItsUser() async throws {
        let cluster = try Cluster()
        defer { Task { await cluster.stop() } }
        let secret = try Self.secret(cluster)
        try await cluster.start(
            "a", entries: Self.entries,
            extra: ["--secret-file", secret]
                + (try OperatorRoleTests.operators(cluster, "a", [Self.uid: "operator", "cluster": "admin"])))
        let forget = try await cluster.console("a", ["--secret-file", secret, "forget", "z"])
        #expect(forget.code == 1)
        #expect(forget.err == "error: forget needs the admin role; you are operator\n", "\(forget.err)")
        let disable = try await cluster.console("a", ["--secret-file", secret, "disable", "a:clock"])
        #expect(disable.code == 0, "\(disable.err)")
    }

    @Test("over TCP a console that proves the cluster secret is the identity cluster")
    func secretConsoleIsCluster() async throws {
        let cluster = try Cluster()
        defer { Task { await cluster.stop() } }
        let secret = try Self.secret(cluster)
        let a = try await cluster.start(
            "a", entries: Self.entries,
            extra: ["--secret-file", secret, "--listen", "tcp:127.0.0.1:0"]
                + (try OperatorRoleTests.operators(cluster, "a", ["cluster": "viewer"])))
        #expect(await a.waitForLine(containing: "listening on tcp:"))
        let line = try #require(a.text.split(separator: "\n").first { $0.contains("listening on tcp:") })
        let address = try #require(line.split(separator: " ").last.map(String.init))
        let refused = try await runConsole(["--node", address, "--timeout", "5", "--secret-file", secret, "disable", "a:clock"])
        #expect(refused.err == "error: disable needs the operator role; you are viewer\n", "\(refused.err)")
        // The secret is a node credential too: a role below admin for cluster is warned about.
        #expect(await a.waitForLine(containing: "whoever holds the cluster secret may also join as a member"))
    }

    @Test("a change the Loader refuses is logged with its operator and published as a refused change")
    func refusedChangesAreAudited() async throws {
        let cluster = try Cluster()
        defer { Task { await cluster.stop() } }
        let a = try await cluster.start("a", entries: Self.entries)
        let refused = try await cluster.console("a", ["disable", "a:nope"])
        #expect(refused.code == 1)
        #expect(await a.waitForLine(containing: "refused: "))
        #expect(a.text.contains("disable entry nope: "), "\(a.text)")
        let events = try await cluster.console("a", ["events", "--json"])
        let change = try #require(Self.changes(events.out).first, "\(events.out)")
        #expect(change["detail"]?["outcome"] == "refused")
        #expect(change["detail"]?["change"] == "disable entry nope")
        #expect(change["detail"]?["operator"]?.stringValue?.isEmpty == false)
    }

    @Test("a command the node does not know is refused as unknown, for any role, and changes nothing")
    func unknownCommandsAreRefused() async throws {
        let cluster = try Cluster()
        defer { Task { await cluster.stop() } }
        try await cluster.start(
            "a", entries: Self.entries, extra: try OperatorRoleTests.operators(cluster, "a", [Self.uid: "viewer"]))
        let before = try Data(contentsOf: URL(fileURLWithPath: cluster.entries("a")))
        let client = try await ControlClient.connect(to: Address(parsing: cluster.address("a")), name: "unknown-test")
        for command in ["frobnicate", "Disable", "enable ", ""] {
            do {
                _ = try await client.request(named: command, args: ["entry": "clock"])
                Issue.record("\(command) was served")
            } catch let failure as ControlFailure {
                #expect(failure.code == "unknown-command", "\(command): \(failure)")
            }
        }
        await client.close()
        #expect(try Data(contentsOf: URL(fileURLWithPath: cluster.entries("a"))) == before)
    }

    @Test("a move the Loader refuses is audited like the other changes")
    func refusedMoveIsAudited() async throws {
        let cluster = try Cluster()
        defer { Task { await cluster.stop() } }
        let a = try await cluster.start("a", entries: Self.entries)
        let refused = try await cluster.console("a", ["move", "a:nope"])
        #expect(refused.code == 1)
        #expect(await a.waitForLine(containing: "move entry nope to the top level"), "\(a.text)")
        let events = try await cluster.console("a", ["events", "--json"])
        let change = try #require(Self.changes(events.out).first, "\(events.out)")
        #expect(change["detail"]?["outcome"] == "refused")
        #expect(change["detail"]?["change"] == "move entry nope to the top level")
    }

    @Test("a cluster-wide status or events shows a member only to an operator that member admits")
    func fanOutIsCheckedByEachMember() async throws {
        let cluster = try Cluster()
        defer { Task { await cluster.stop() } }
        try await cluster.start("a", entries: Self.entries, extra: try OperatorRoleTests.operators(cluster, "a", [Self.uid: "viewer"]))
        let b = try await cluster.start(
            "b", entries: #"{"version":1,"entries":[{"id":"secret-clock","plugin":"clock"}]}"#, peers: ["a"],
            extra: try OperatorRoleTests.operators(cluster, "b", ["uid:4000000000": "admin"]))
        #expect(await b.waitForLine(containing: "linked to a"))
        let status = try await cluster.console("a", ["status", "--json"])
        // A member that refuses the operator counts as one `status` could not read: exit 3.
        #expect(status.code == 3, "\(status.err)")
        let nodes = try JSONParser().parse(Array(status.out.utf8))["nodes"]?.arrayValue ?? []
        let onB = try #require(nodes.first { $0["name"] == "b" }, "\(status.out)")
        #expect(onB["reachable"] == false)
        #expect(onB["unreachable"]?.stringValue?.contains("not listed in the operators file of b") == true, "\(status.out)")
        #expect(!status.out.contains("secret-clock"), "\(status.out)")
        let events = try await cluster.console("a", ["events", "--json"])
        #expect(events.code == 0, "\(events.err)")
        #expect(!events.out.contains("secret-clock"), "\(events.out)")
        #expect(events.out.contains("\"clock\""), "\(events.out)")
    }

    @Test("a cluster-wide events --follow passes on a member's events only when that member admits the operator")
    func followedEventsAreCheckedByEachMember() async throws {
        let cluster = try Cluster()
        defer { Task { await cluster.stop() } }
        let entries = #"{"version":1,"entries":[{"id":"secret-clock","plugin":"clock"}]}"#
        try await cluster.start("a", entries: Self.entries, extra: try OperatorRoleTests.operators(cluster, "a", [Self.uid: "operator"]))
        let b = try await cluster.start(
            "b", entries: entries, peers: ["a"], extra: try OperatorRoleTests.operators(cluster, "b", [Self.uid: "viewer"]))
        let c = try await cluster.start(
            "c", entries: entries, peers: ["a"], extra: try OperatorRoleTests.operators(cluster, "c", ["uid:4000000000": "admin"]))
        #expect(await b.waitForLine(containing: "linked to a"))
        #expect(await c.waitForLine(containing: "linked to a"))
        let follower = try await ControlClient.connect(to: try Address(parsing: cluster.address("a")))
        _ = try await follower.request(.subscribe, args: ["follow": true, "history": false, "cluster": true])
        // A change refused on c (which does not admit this operator), then one refused on b (which
        // does, as a viewer): only b's reaches the follower.
        let onC = try await cluster.console("a", ["disable", "c:secret-clock"])
        #expect(onC.err.contains("not listed in the operators file of c"), "\(onC.err)")
        #expect(await c.waitForLine(containing: "refused: "))
        let onB = try await cluster.console("a", ["disable", "b:secret-clock"])
        #expect(onB.err.contains("you are viewer"), "\(onB.err)")
        let seen = await Self.events(of: follower, until: { $0.kind == "change" })
        #expect(seen.last?.kind == "change" && seen.last?.node == "b", "\(seen)")
        #expect(!seen.contains { $0.node == "c" }, "c's events reached an operator c does not admit: \(seen)")
        await follower.close()
    }
}
