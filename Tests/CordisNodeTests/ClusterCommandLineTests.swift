import CordisNode
import Foundation
import Testing

/// The command line and start-up of a real `cordis-node`: a duplicate name is refused by the cluster,
/// and each start-up failure has its exit code.
@Suite("Cluster: command line")
struct ClusterCommandLineTests {
    @Test("A second node named like a live member is refused at the handshake, by that member and by its peers")
    func duplicateNameIsRefused() async throws {
        try await TestCluster.run { cluster in
            let b = try await cluster.start("b", entries: #"[{"id": "clock", "plugin": "clock"}]"#)
            let a = try await cluster.start("a", entries: #"[{"id": "greeter", "plugin": "greeter"}]"#, peers: [b])
            try #require(await a.waitForLine(containing: "hello at"))
            let console = try await cluster.control(a)

            // Another "b" dials a: a already has a live b.
            try cluster.folder.write("b2.json", #"[{"id": "clock", "plugin": "clock"}]"#)
            let impostor = try await cluster.launch("b", arguments: [
                "--name", "b", "--entries", cluster.folder.path("b2.json"), "--listen", "unix:\(cluster.folder.path("b2.sock"))",
                "--peer", a.address, "--log-level", "debug",
            ] + ClusterMember.timing)
            try #require(await a.waitForLine(containing: "a live member is named b"))
            #expect(a.process.text.contains("handshake from connection "))
            try #require(await impostor.waitForLine(containing: "a live member is named b"))
            // And another dials b itself.
            try cluster.folder.write("b3.json", #"[]"#)
            let twin = try await cluster.launch("b", arguments: [
                "--name", "b", "--entries", cluster.folder.path("b3.json"), "--listen", "unix:\(cluster.folder.path("b3.sock"))",
                "--peer", b.address, "--log-level", "debug",
            ] + ClusterMember.timing)
            try #require(await twin.waitForLine(containing: "uses this side's own name"))
            #expect(!twin.process.text.contains("linked to b"))
            #expect(!impostor.process.text.contains("linked to"))
            #expect(!a.process.text.contains("b restarted"))
            #expect(try await console.fiber(ofEntry: "greeter")?.provider("clock") == "b")
            #expect(a.process.text.occurrences(of: "hello at") == 1)
            #expect(impostor.process.process.isRunning && twin.process.process.isRunning)
        }
    }

    @Test("--help and --version print and exit 0; a bad flag exits 64; an unparsable entries file 66; an address in use 69")
    func exitCodes() async throws {
        try await TestCluster.run { cluster in
            let help = try cluster.spawn("help", arguments: ["--help"])
            #expect(await help.exitCode() == 0)
            #expect(help.text.contains("Usage: cordis-node"))

            let version = try cluster.spawn("version", arguments: ["--version"])
            #expect(await version.exitCode() == 0)
            #expect(version.text.contains(CordisVersion.current))

            let bad = try cluster.spawn("bad", arguments: ["--name", "x", "--entries", cluster.folder.path("x.json"), "--bogus"])
            #expect(await bad.exitCode() == 64)
            #expect(bad.text.contains("error:"))

            try cluster.folder.write("broken.json", "{ not json")
            let broken = try cluster.spawn("broken", arguments: [
                "--name", "x", "--entries", cluster.folder.path("broken.json"), "--listen", "unix:\(cluster.folder.path("x.sock"))",
            ])
            #expect(await broken.exitCode() == 66)
            #expect(broken.text.contains("error:"))

            try cluster.folder.write("g.json", "[]")
            let group = try cluster.spawn("group", arguments: [
                "--name", "g", "--entries", cluster.folder.path("g.json"), "--listen", "unix:\(cluster.folder.path("g.sock"))",
                "--socket-group", "no-such-group-here",
            ])
            #expect(await group.exitCode() == 64)
            #expect(group.text.contains("error: --socket-group: no group named no-such-group-here"), "\(group.text)")
            #expect(!group.text.contains("error: error:"), "\(group.text)")

            let b = try await cluster.start("b", entries: "[]")
            try cluster.folder.write("c.json", "[]")
            let clash = try cluster.spawn("c", arguments: [
                "--name", "c", "--entries", cluster.folder.path("c.json"), "--listen", b.address,
            ])
            #expect(await clash.exitCode() == 69)
            #expect(clash.text.contains("error:"))
            #expect(b.process.process.isRunning)
        }
    }
}
