import CordisProcessTesting
import CordisNode
import CordisWire
import Foundation
import Testing

/// Nodes over TCP with a cluster secret: port 0 picks a port that the node prints;
/// members with the secret link and share services, a node with another secret is refused.
@Suite("Cluster: TCP with a secret")
struct ClusterTCPTests {
    /// Writes a secret file of 40 characters with mode 0600.
    static func writeSecret(_ name: String, _ character: Character, in folder: TestFolder) throws -> String {
        let path = folder.path(name)
        try folder.write(name, String(repeating: character, count: 40) + "\n")
        #expect(chmod(path, 0o600) == 0)
        return path
    }

    /// The `tcp:127.0.0.1:PORT` address a node printed.
    static func listeningAddress(of member: ClusterMember) throws -> String {
        let line = try #require(member.process.text.lines(containing: "listening on tcp:").first)
        let address = try #require(line.components(separatedBy: "listening on ").last)
        return address.trimmingCharacters(in: .whitespaces)
    }

    static func arguments(_ name: String, secret: String, peers: [String] = [], in folder: TestFolder) -> [String] {
        ["--name", name, "--entries", folder.path("\(name).json"), "--listen", "tcp:127.0.0.1:0", "--secret-file", secret]
            + peers.flatMap { ["--peer", $0] } + ClusterMember.timing
    }

    @Test("Over TCP with a secret, a greeter injects a remote clock; a node with the wrong secret is refused")
    func remoteInjectOverTCP() async throws {
        try await TestCluster.run { cluster in
            let folder = cluster.folder
            let secret = try Self.writeSecret("secret", "s", in: folder)
            let wrong = try Self.writeSecret("wrong", "w", in: folder)
            try folder.write("b.json", #"[{"id": "clock", "plugin": "clock"}]"#)
            try folder.write("a.json", #"[{"id": "greeter", "plugin": "greeter"}]"#)
            try folder.write("c.json", #"[{"id": "greeter", "plugin": "greeter"}]"#)

            let b = try await cluster.launch("b", arguments: Self.arguments("b", secret: secret, in: folder))
            let bAddress = try Self.listeningAddress(of: b)
            #expect(bAddress.hasPrefix("tcp:127.0.0.1:") && !bAddress.hasSuffix(":0"))
            let a = try await cluster.launch("a", arguments: Self.arguments("a", secret: secret, peers: [bAddress], in: folder))
            try #require(await a.waitForLine(containing: "hello at"))
            #expect(a.process.text.lines(containing: "hello at").first?.contains(" from b ") == true)

            let secrets = try ClusterSecrets.load(files: [secret])
            let console = try await ControlClient.connect(
                to: Address(parsing: try Self.listeningAddress(of: a)), name: "test-console", secrets: secrets)
            let greeter = try await console.awaitFiber(ofEntry: "greeter", inState: "active")
            #expect(greeter?.provider("clock") == "b")
            await console.close()

            let c = try await cluster.launch(
                "c", arguments: Self.arguments("c", secret: wrong, peers: [bAddress], in: folder) + ["--log-level", "debug"])
            try #require(await b.waitForLine(containing: "handshake from"))
            try #require(await c.waitForLine(containing: "dialling \(bAddress) failed"))
            #expect(!c.process.text.contains("linked to"))
            #expect(!c.process.text.contains("hello at"))
            #expect(!b.process.text.contains("linked to c"))
            // A console without the secret learns nothing.
            await #expect(throws: (any Error).self) {
                let stranger = try await ControlClient.connect(to: Address(parsing: bAddress), name: "stranger")
                await stranger.close()
            }
        }
    }
}
