import CordisJSON
import CordisControl
import CordisProcessTesting
import CordisWire
import Foundation
import Testing
@testable import CordisConsole

/// The console tells the truth about what it sees: a killed member as last known with the time it was
/// last seen, an unknown member named as such, its own version, and why a node refused it.
@Suite("The console tells the truth", .serialized)
struct ConsoleTruthTests {
    static let entriesA = #"{"version":1,"entries":[{"id":"clock","plugin":"clock"}]}"#
    static let entriesB = #"{"version":1,"entries":[{"id":"greeter","plugin":"greeter"}]}"#

    @Test("a killed member is shown as last known, with the seconds since it was last seen, and status exits 3")
    func killedMemberIsLastKnown() async throws {
        let cluster = try Cluster()
        defer { Task { await cluster.stop() } }
        try await cluster.start("a", entries: Self.entriesA)
        let b = try await cluster.start("b", entries: Self.entriesB, peers: ["a"])
        _ = try await ConsoleClusterTests.awaitStatus(cluster, through: "a", "b's greeter active") {
            ConsoleClusterTests.fiber($0, "b", entry: "greeter")?["state"] == "active"
        }
        b.signal(SIGKILL)
        let status = try await ConsoleClusterTests.awaitStatus(cluster, through: "a", "b unreachable") {
            ConsoleClusterTests.node($0, "b")?["reachable"] == false
        }
        let node = try #require(ConsoleClusterTests.node(status, "b"))
        let seen = try #require(node["lastSeen"]?.doubleValue, "\(node)")
        #expect(seen >= 0 && seen < 60)
        #expect(node["fibers"]?.arrayValue?.contains { $0["entry"] == "greeter" } == true)
        let text = try await cluster.console("a", ["status"])
        #expect(text.code == 3)
        let header = try #require(text.out.split(separator: "\n").first { $0.hasPrefix("node b") }, "\(text.out)")
        #expect(header.contains("unreachable") && header.contains(" s ago"), "\(header)")
        // The reason, said once: `unreachable (a has no link to b)`, not "unreachable (b is unreachable …)".
        #expect(header.contains("unreachable (a has no link to b)"), "\(header)")
        #expect(header.components(separatedBy: "unreachable").count == 2, "\(header)")
        #expect(!header.hasSuffix("last seen:"))
        #expect(text.out.contains("fibers (last known):"), "\(text.out)")
        let dot = try await cluster.console("a", ["graph", "--format", "dot"])
        #expect(dot.out.contains("(last known)"), "\(dot.out)")
    }

    @Test("events --on a member nobody knows is an error on stderr, exit 1")
    func eventsOnUnknownMember() async throws {
        let cluster = try Cluster()
        defer { Task { await cluster.stop() } }
        try await cluster.start("a", entries: Self.entriesA)
        let result = try await cluster.console("a", ["events", "--on", "z"])
        #expect(result.code == 1, "\(result)")
        #expect(result.out.isEmpty)
        #expect(result.err.hasPrefix("error: ") && result.err.contains("no member named z"), "\(result.err)")
        let own = try await cluster.console("a", ["events", "--on", "a"])
        #expect(own.code == 0, "\(own)")
    }

    @Test("cordis-console --version and cordis-node --version print their version and exit 0")
    func versions() async throws {
        let console = try await runConsole(["--version"])
        #expect(console.code == 0, "\(console)")
        #expect(console.out == "cordis-console \(CordisVersion.current)\n")
        let node = try await ChildProcess.run(NodeProcess.nodeExecutable, ["--version"], deadline: .seconds(30))
        #expect(node.termination?.status == 0)
        #expect(node.output == "cordis-node \(CordisVersion.current)\n")
        let parsed = try ConsoleArguments(parsing: ["sign", "--key", "k.pem", "--node", "a", "--version", "3", "t.json"])
        guard case .sign(_, _, let version, _, _) = parsed.command else {
            Issue.record("sign --version N is not sign: \(parsed.command)")
            return
        }
        #expect(version == 3)
    }

    @Test("a console the operators file does not list is told who it was seen as and how to be admitted")
    func unlistedConsoleLearnsItsIdentity() async throws {
        let cluster = try Cluster()
        defer { Task { await cluster.stop() } }
        try await cluster.start("a", entries: Self.entriesA, extra: try OperatorRoleTests.operators(cluster, "a", ["uid:4000000000": "admin"]))
        let result = try await cluster.console("a", ["status"])
        #expect(result.code == 69)
        #expect(result.out.isEmpty)
        #expect(result.err.contains("not admitted"), "\(result.err)")
        #expect(result.err.contains("seen as uid:\(getuid())"), "\(result.err)")
        #expect(result.err.contains("operators file") && result.err.contains("SIGHUP"), "\(result.err)")
        #expect(!result.err.contains("clock"))
    }

    @Test("libssl's alerts read as what happened and what to do")
    func tlsAlertsAreExplained() {
        let unknown = ConsoleSession.connectFailure(
            TransportError(.tls, "TLS: TLS handshake failed: error:0A000418:SSL routines::tlsv1 alert unknown ca"),
            node: "tcp:127.0.0.1:7000", timeout: 5, certificate: "alice.pem", ca: "ca.pem")
        #expect(unknown.exitCode == 69)
        #expect(unknown.message.contains("does not trust this console's certificate alice.pem"), "\(unknown.message)")
        #expect(!unknown.message.contains("tlsv1"))
        let untrusted = ConsoleSession.connectFailure(
            TransportError(.tls, "TLS: TLS handshake refused: the peer's certificate did not verify: unable to get local issuer certificate"),
            node: "tcp:127.0.0.1:7000", timeout: 5, certificate: "alice.pem", ca: "ca.pem")
        #expect(untrusted.message.contains("did not verify against --tls-ca ca.pem"), "\(untrusted.message)")
    }
}
