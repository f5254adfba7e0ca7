import CordisJSON
import CordisProcessTesting
import CordisWire
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Who may be a member on a Unix socket, with a real `cordis-node` and hand-driven peers: only the
/// node's own user and root hold the node role there; everyone else the socket admits is a console,
/// whatever its hello says, so the operators file decides what it may do. A member's change must
/// carry the operator it is relayed for.
@Suite("Node role on a Unix socket", .serialized)
struct NodeRoleAdmissionTests {
    static let entries = #"[{"id": "clock", "plugin": "clock"}]"#
    /// A user other than the test's (which is the node's): `nobody`.
    static let stranger: uid_t = 65534

    static func operators(_ folder: TestFolder, _ roles: String) throws -> [String] {
        try folder.write("operators.json", roles)
        return ["--operators", folder.path("operators.json")]
    }

    static func bytes(_ path: String) throws -> Data { try Data(contentsOf: URL(fileURLWithPath: path)) }

    @Test("a socket-group member that is not the node's user is refused the node role and changes nothing")
    func strangerCannotBeAMember() async throws {
        try await TestCluster.run { cluster in
            chmod(cluster.folder.path(""), 0o755)
            let a = try await cluster.start(
                "a", entries: Self.entries, extra: try Self.operators(cluster.folder, #"{"uid:65534": "viewer"}"#))
            let before = try Self.bytes(a.entriesFile)
            let peer = try RawUnixPeer(path: a.socket, uid: Self.stranger)
            do {
                _ = try await peer.handshake(role: .node, name: "x")
                // Admitted as a member: what it may then do is the defect.
                let response = try await peer.ask(ControlRequest(id: 1, command: .disable, args: ["entry": "clock"]))
                Issue.record("uid \(Self.stranger) was admitted as a member; its disable answered \(response)")
            } catch let error as WireError {
                #expect(error.code == .rejected, "\(error)")
                #expect(error.message.contains("not admitted"), "\(error)")
            }
            #expect(try Self.bytes(a.entriesFile) == before)
            #expect(await a.waitForLine(containing: "refused the node role to uid \(Self.stranger)"))
            // The same user as a console has its listed role, no more.
            let console = try RawUnixPeer(path: a.socket, uid: Self.stranger)
            _ = try await console.handshake(role: .console, name: "c")
            #expect(try await console.ask(ControlRequest(id: 1, command: .status)).errorCode == nil)
            let refused = try await console.ask(ControlRequest(id: 2, command: .disable, args: ["entry": "clock"]))
            #expect(refused.errorCode == "forbidden")
            #expect(refused.errorMessage == "disable needs the operator role; you are viewer")
            #expect(try Self.bytes(a.entriesFile) == before)
        }
    }

    @Test("a member's change that carries no operator is refused, audited, and changes nothing")
    func memberChangeNeedsItsOperator() async throws {
        try await TestCluster.run { cluster in
            let a = try await cluster.start(
                "a", entries: Self.entries, extra: try Self.operators(cluster.folder, #"{"uid:65534": "viewer"}"#))
            let before = try Self.bytes(a.entriesFile)
            let peer = try RawUnixPeer(path: a.socket, uid: getuid())
            #expect(try await peer.handshake(role: .node, name: "x").name == "a")
            let response = try await peer.ask(ControlRequest(id: 1, command: .disable, args: ["entry": "clock"]))
            #expect(response.errorCode == "forbidden", "\(response)")
            #expect(response.errorMessage?.contains("carries no operator") == true, "\(response)")
            #expect(try Self.bytes(a.entriesFile) == before)
            #expect(await a.waitForLine(containing: "refused: member x via member x: disable entry clock"))
            // Reads a member makes for itself still work.
            #expect(try await peer.ask(ControlRequest(id: 2, command: .status)).errorCode == nil)
        }
    }

    @Test("a node that dials a member whose Unix socket another user serves refuses the link, telling the member why, and never links it")
    func dialledStrangerIsNotAMember() async throws {
        try await TestCluster.run { cluster in
            chmod(cluster.folder.path(""), 0o755)
            // b runs as the stranger, in a folder of its own.
            let home = cluster.folder.path("b-home")
            try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
            try #"{"version": 1, "entries": []}"#.write(toFile: home + "/b.json", atomically: true, encoding: .utf8)
            for path in [home, home + "/b.json"] { chown(path, Self.stranger, Self.stranger) }
            let bAddress = "unix:\(home)/b.sock"
            let b = try await ClusterMember.launch(
                "b", folder: cluster.folder,
                arguments: [
                    "--reuid", "\(Self.stranger)", "--regid", "\(Self.stranger)", "--clear-groups",
                    NodeProcess.nodeExecutable.path, "--name", "b", "--entries", home + "/b.json", "--listen", bAddress,
                ] + ClusterMember.timing,
                executable: URL(fileURLWithPath: "/usr/bin/setpriv"))
            cluster.track(b)
            let a = try await cluster.start("a", entries: Self.entries, extra: ["--peer", bAddress])
            let reason = "its Unix socket is served by uid \(Self.stranger), neither this node's user nor root"
            #expect(await a.waitForLine(containing: "refused a link from b: \(reason)"))
            #expect(await b.waitForLine(containing: "a said goodbye: not-admitted: \(reason)"))
            #expect(!a.process.text.contains("linked to b"))
        }
    }
}
