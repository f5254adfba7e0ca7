import CordisControl
import CordisJSON
import CordisNode
import CordisProcessTesting
import CordisWire
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Real `cordis-node` processes with TLS, and peers that must not get in: certificates from another CA,
/// expired, naming another node, none at all; a node with the cluster secret instead of TLS (both sides
/// say which one lacks TLS); a handshake that stalls inside TLS; bad bytes inside a session; operators
/// named by their certificates; and a CA rotation.
@Suite("Cluster: TLS refusals, operators and rotation", .serialized)
struct ClusterTLSRefusalTests {
    typealias Base = ClusterTLSTests

    static func address(of member: ClusterMember) async throws -> Address {
        try Address(parsing: try await Base.tcpAddress(of: member))
    }

    /// Expects `connect` to fail; records an issue (and closes the client) when it got in.
    static func expectRefused(_ why: String, _ connect: () async throws -> ControlClient) async {
        do {
            let client = try await connect()
            let status = try? await client.request(.status)
            Issue.record("a console with \(why) was admitted; it read \(String(describing: status))")
            await client.close()
        } catch {
            // Refused: it got no answer to anything.
        }
    }

    @Test("a peer whose certificate is from another CA, expired, names another node, or is missing is refused and learns nothing")
    func badCertificatesAreRefused() async throws {
        try await TestCluster.run { cluster in
            let folder = cluster.folder
            let certificates = try await TLSTestCertificates(in: folder)
            try folder.write("a.json", #"[{"id": "counter", "plugin": "counter"}]"#)
            let a = try await cluster.launch("a", arguments: Base.arguments("a", in: folder, tls: certificates.flags("node-a")))
            let address = try await Self.address(of: a)

            await Self.expectRefused("a certificate from another CA") {
                try await ControlClient.connect(to: address, tls: try certificates.context("other/operator-alice"), timeout: .seconds(10))
            }
            await Self.expectRefused("an expired certificate") {
                try await ControlClient.connect(to: address, tls: try certificates.context("operator-old"), timeout: .seconds(10))
            }
            await Self.expectRefused("no certificate") {
                try await ControlClient.connect(
                    to: address, tls: try TLSContext(withoutCertificateTrusting: certificates.folder + "/ca.pem"),
                    timeout: .seconds(10))
            }
            // A node that calls itself b but holds c's certificate.
            let loop = try EventLoop(name: "test-impostor")
            do {
                let link = try await Link.connect(
                    to: address, on: loop,
                    configuration: HandshakeConfiguration(
                        identity: PeerIdentity(role: .node, name: "b", incarnation: "impostor"), secrets: nil,
                        tls: try certificates.context("node-c")))
                Issue.record("a node named b holding c's certificate was admitted by \(link.peer.name)")
                link.close()
            } catch let error as WireError {
                #expect(error.message.contains("certificate names cordis://node/c"), "\(error)")
            }
            await loop.shutdown()
            // Real node processes: one from another CA, one with an expired certificate.
            try folder.write("b.json", "[]")
            try folder.write("stale.json", "[]")
            let foreign = try await cluster.launch(
                "b", arguments: Base.arguments("b", in: folder, tls: certificates.flags("other/node-b"), peers: [address.description]))
            let stale = try await cluster.launch(
                "stale", arguments: Base.arguments("stale", in: folder, tls: certificates.flags("node-stale"), peers: [address.description]))
            #expect(await a.waitForOccurrences(of: "TLS link from", count: 6))
            #expect(await foreign.waitForLine(containing: "TLS link to \(address) refused"))
            #expect(await stale.waitForLine(containing: "TLS link to \(address) refused"))
            #expect(a.process.text.contains("did not verify"), "\(a.process.text)")
            #expect(a.process.text.contains("expired"))
            #expect(a.process.text.contains("no certificate") || a.process.text.contains("presented no certificate"))
            // Nobody got in: no console, no member.
            #expect(!a.process.text.contains("console "), "\(a.process.text)")
            #expect(!a.process.text.contains("linked to"))
            #expect(!foreign.process.text.contains("linked to"))
            #expect(!stale.process.text.contains("linked to"))
            // A certificate that does not name the node is refused at start.
            let wrong = try cluster.spawn("c", arguments: Base.arguments("c", in: folder, tls: certificates.flags("node-a")))
            #expect(await wrong.exitCode() == 64)
            #expect(wrong.text.contains("names cordis://node/a, not this node (cordis://node/c)"), "\(wrong.text)")
        }
    }

    @Test("a TLS node and an HMAC node refuse each other, and each logs which side lacks TLS")
    func tlsAndHMACRefuseEachOther() async throws {
        try await TestCluster.run { cluster in
            let folder = cluster.folder
            let certificates = try await TLSTestCertificates(in: folder)
            let secret = try ClusterTCPTests.writeSecret("secret", "s", in: folder)
            for name in ["t", "h", "c"] { try folder.write("\(name).json", "[]") }
            // t: TLS (a's certificate is for node a: t is named a).
            let t = try await cluster.launch("a", arguments: Base.arguments("a", in: folder, tls: certificates.flags("node-a")))
            let tAddress = try await Base.tcpAddress(of: t)
            let h = try await cluster.launch("h", arguments: ClusterTCPTests.arguments("h", secret: secret, peers: [tAddress], in: folder))
            let hAddress = try await Base.tcpAddress(of: h)
            #expect(await t.waitForLine(containing: "the peer has no TLS configured, and this node requires TLS"))
            #expect(await h.waitForLine(containing: "(tls-required)"))
            #expect(h.process.text.contains("this node has no TLS configured"), "\(h.process.text)")
            // And the other way: a TLS node dials the HMAC node.
            let c = try await cluster.launch("c", arguments: Base.arguments("c", in: folder, tls: certificates.flags("node-c"), peers: [hAddress]))
            #expect(await h.waitForLine(containing: "the peer speaks TLS, and this node has no TLS configured"))
            #expect(await c.waitForLine(containing: "the peer answered without TLS: the peer has no TLS configured"))
            for member in [t, h, c] { #expect(!member.process.text.contains("linked to"), "\(member.name)") }
        }
    }

    @Test("a TLS handshake that stalls after a partial ClientHello is cut by the handshake timeout while the node keeps serving")
    func stalledHandshakeIsCut() async throws {
        try await TestCluster.run { cluster in
            let folder = cluster.folder
            let certificates = try await TLSTestCertificates(in: folder)
            try folder.write("a.json", "[]")
            let a = try await cluster.launch("a", arguments: Base.arguments("a", in: folder, tls: certificates.flags("node-a")))
            let port = try await Base.port(of: a)
            let fd = TCPRelay.dial(port: port)
            try #require(fd >= 0)
            defer { close(fd) }
            // A TLS record header announcing a 512-byte ClientHello, and its first bytes only.
            let partial: [UInt8] = [0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xFC, 0x03, 0x03]
            #expect(partial.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) } == partial.count)
            let started = ContinuousClock.now
            // Meanwhile the node serves: a console over TLS reads its status.
            let console = try await ControlClient.connect(
                to: try await Self.address(of: a), tls: try certificates.context("operator-alice"), timeout: .seconds(10))
            #expect(try await console.request(.status).objectValue?["nodes"] != nil)
            await console.close()
            // The stalled connection is closed by the node: EOF (or a reset) within the deadline.
            let closed = await onOwnThread { () -> Bool in
                var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                guard poll(&poller, 1, 20_000) == 1 else { return false }
                var byte: UInt8 = 0
                return read(fd, &byte, 1) <= 0
            }
            let elapsed = ContinuousClock.now - started
            #expect(closed, "the stalled TLS handshake was not cut")
            #expect(elapsed >= .seconds(3), "closed after \(elapsed): sooner than the handshake timeout")
            #expect(await a.waitForLine(containing: "within"))
        }
    }

    @Test("bad bytes injected inside an established TLS session close that link only, and the link comes back")
    func badBytesCloseThatLinkOnly() async throws {
        try await TestCluster.run { cluster in
            let folder = cluster.folder
            let certificates = try await TLSTestCertificates(in: folder)
            try folder.write("b.json", #"[{"id": "counter", "plugin": "counter"}]"#)
            try folder.write("a.json", "[]")
            let tls = { (name: String) in certificates.flags("node-\(name)") }
            // A free port below the ephemeral range, which no connection takes as its source port.
            let bPort = try LoopbackPorts.free(1)[0]
            let relay = try TCPRelay(targetPort: bPort)
            defer { relay.stop() }
            let bArguments = Base.arguments("b", in: folder, tls: tls("b"))
                .map { $0 == "tcp:127.0.0.1:0" ? "tcp:127.0.0.1:\(bPort)" : $0 } + ["--advertise", relay.address]
            let b = try await cluster.launch("b", arguments: bArguments)
            let a = try await cluster.launch("a", arguments: Base.dialOnly("a", in: folder, tls: tls("a"), peer: relay.address))
            try #require(await a.waitForLine(containing: "linked to b"))
            let onB = try await Base.local(b)
            try #require(try await onB.awaitFiber(ofEntry: "counter", inState: "active") != nil)
            let onA = try await Base.local(a)
            #expect(try await Base.awaitCall(onA) != nil)

            // An application-data record that no key made.
            var forged: [UInt8] = [0x17, 0x03, 0x03, 0x00, 0x40]
            forged += (0..<64).map { _ in UInt8.random(in: 0...255) }
            #expect(relay.inject(forged) >= 1)
            #expect(await b.waitForLine(containing: "link to a lost"))
            // That link only: the console on B is still linked and answers; the link comes back.
            #expect(try await onB.request(.status).objectValue?["nodes"] != nil)
            #expect(await a.waitForOccurrences(of: "linked to b", count: 2))
            #expect(relay.connections >= 2)
            #expect(try await Base.awaitCall(onA) != nil)
            await onA.close()
            await onB.close()
            #expect(a.process.process.isRunning && b.process.process.isRunning)
        }
    }

    @Test("a console with an operator certificate gets the role --operators maps its name to; an unlisted operator is refused")
    func operatorCertificateNamesTheRole() async throws {
        try await TestCluster.run { cluster in
            let folder = cluster.folder
            let certificates = try await TLSTestCertificates(in: folder)
            try folder.write("a.json", #"[{"id": "counter", "plugin": "counter"}]"#)
            try folder.write("operators.json", #"{"alice": "viewer", "bob": "operator"}"#)
            let a = try await cluster.launch(
                "a", arguments: Base.arguments("a", in: folder, tls: certificates.flags("node-a"), extra: ["--operators", folder.path("operators.json")]))
            let address = try await Base.tcpAddress(of: a)
            func console(_ holder: String, _ words: [String]) async throws -> (Int32?, String) {
                var environment = ProcessInfo.processInfo.environment
                environment["CORDIS_CONSOLE_NODE"] = address
                environment["CORDIS_CONSOLE_TLS_CERT"] = "\(certificates.folder)/\(holder).pem"
                environment["CORDIS_CONSOLE_TLS_KEY"] = "\(certificates.folder)/\(holder).key"
                environment["CORDIS_CONSOLE_TLS_CA"] = "\(certificates.folder)/ca.pem"
                let (ended, output) = try await ChildProcess.run(
                    ConsoleFaultTests.consoleExecutable, words, directory: folder.url, environment: environment,
                    deadline: .seconds(60))
                return (ended?.status, output)
            }
            let viewing = try await console("operator-alice", ["members"])
            #expect(viewing.0 == 0, "\(viewing.1)")
            let refused = try await console("operator-alice", ["disable", "a:counter"])
            #expect(refused.0 == 1)
            #expect(refused.1.contains("disable needs the operator role; you are viewer"), "\(refused.1)")
            let allowed = try await console("operator-bob", ["disable", "a:counter"])
            #expect(allowed.0 == 0, "\(allowed.1)")
            let unlisted = try await console("operator-carol", ["members"])
            #expect(unlisted.0 == 69, "\(unlisted.1)")
            // Written before the answers, but read from a's output by another thread: waited for.
            #expect(await a.waitForLine(containing: "refused console carol"), "\(a.process.text)")
            #expect(await a.waitForLine(containing: "CORDIS_OPERATOR=bob"), "\(a.process.text)")
        }
    }

    @Test("during a CA rotation, nodes with certificates from the old and the new CA link when both CAs are in the CA file")
    func caRotationInteroperates() async throws {
        try await TestCluster.run { cluster in
            let folder = cluster.folder
            let certificates = try await TLSTestCertificates(in: folder)
            try folder.write("a.json", #"[{"id": "counter", "plugin": "counter"}]"#)
            try folder.write("b.json", "[]")
            let a = try await cluster.launch("a", arguments: Base.arguments("a", in: folder, tls: certificates.flags("node-a", ca: "bundle.pem")))
            let address = try await Base.tcpAddress(of: a)
            let b = try await cluster.launch(
                "b", arguments: Base.arguments("b", in: folder, tls: certificates.flags("ca2/node-b", ca: "bundle.pem"), peers: [address]))
            #expect(await a.waitForLine(containing: "linked to b"))
            #expect(await b.waitForLine(containing: "linked to a"))
            let onB = try await Base.local(b)
            #expect(try await Base.awaitCall(onB) != nil)
            await onB.close()
            // An operator certificate from the old CA, with both CAs trusted, reaches the node of the new one.
            let console = try await ControlClient.connect(
                to: try Address(parsing: try await Base.tcpAddress(of: b)),
                tls: try certificates.context("operator-alice", ca: "bundle.pem"), timeout: .seconds(10))
            #expect(try await console.request(.status).objectValue?["nodes"] != nil)
            await console.close()
            // A node that trusts the old CA only refuses the new CA's node.
            try folder.write("c.json", "[]")
            let c = try await cluster.launch("c", arguments: Base.arguments("c", in: folder, tls: certificates.flags("node-c"), peers: [address]))
            #expect(await c.waitForLine(containing: "linked to a"))
            // c learns b from a and dials it over TCP, or b dials c: either way c refuses b's certificate
            // (their Unix sockets, which never run TLS, may still link them: peer credentials admit them).
            #expect(await c.waitForLine(containing: "did not verify"), "\(c.process.text)")
        }
    }

    @Test("SIGHUP reads the TLS files again: new links get the new certificate, links up keep theirs, a bad file changes nothing")
    func certificatesReloadOnSighup() async throws {
        try await TestCluster.run { cluster in
            let folder = cluster.folder
            let certificates = try await TLSTestCertificates(in: folder)
            let live = folder.path("live")
            try FileManager.default.createDirectory(atPath: live, withIntermediateDirectories: true)
            func install(_ holder: String) throws {
                for suffix in ["pem", "key"] {
                    let target = "\(live)/b.\(suffix)"
                    try? FileManager.default.removeItem(atPath: target)
                    try FileManager.default.copyItem(atPath: "\(certificates.folder)/\(holder).\(suffix)", toPath: target)
                    chmod(target, 0o600)
                }
            }
            try install("node-b")
            try folder.write("b.json", #"[{"id": "counter", "plugin": "counter"}]"#)
            let tls = ["--tls-cert", "\(live)/b.pem", "--tls-key", "\(live)/b.key", "--tls-ca", "\(certificates.folder)/bundle.pem"]
            let b = try await cluster.launch("b", arguments: Base.arguments("b", in: folder, tls: tls))
            let address = try await Self.address(of: b)
            // A console that trusts only the new CA: b's certificate is still from the old one.
            let trustingNewCA = { try certificates.context("operator-alice", ca: "ca2/ca.pem") }
            await Self.expectRefused("a console trusting only the CA b does not use yet") {
                try await ControlClient.connect(to: address, tls: try trustingNewCA(), timeout: .seconds(10))
            }
            let before = try await ControlClient.connect(
                to: address, tls: try certificates.context("operator-bob", ca: "bundle.pem"), timeout: .seconds(10))

            try install("ca2/node-b")
            b.process.signal(SIGHUP)
            #expect(await b.waitForLine(containing: "reloaded the TLS certificate, key and CA files"), "\(b.process.text)")
            let after = try await ControlClient.connect(to: address, tls: try trustingNewCA(), timeout: .seconds(10))
            #expect(try await after.request(.status).objectValue?["nodes"] != nil)
            await after.close()
            // The link made before the reload still works.
            #expect(try await before.request(.status).objectValue?["nodes"] != nil)
            await before.close()

            // A certificate that names another node is refused; the one in use stays.
            try install("node-a")
            b.process.signal(SIGHUP)
            #expect(await b.waitForLine(containing: "TLS files not reloaded"), "\(b.process.text)")
            #expect(b.process.text.contains("names cordis://node/a, not this node"), "\(b.process.text)")
            let still = try await ControlClient.connect(to: address, tls: try trustingNewCA(), timeout: .seconds(10))
            #expect(try await still.request(.status).objectValue?["nodes"] != nil)
            await still.close()
            #expect(b.process.process.isRunning)
        }
    }

    @Test("SIGHUP with a CA file that does not verify the node's own certificate is refused and logged; the CA in use stays")
    func caThatDoesNotVerifyTheNodeIsRefusedOnSighup() async throws {
        try await TestCluster.run { cluster in
            let folder = cluster.folder
            let certificates = try await TLSTestCertificates(in: folder)
            let ca = folder.path("live-ca.pem")
            try FileManager.default.copyItem(atPath: "\(certificates.folder)/ca.pem", toPath: ca)
            try folder.write("b.json", #"[{"id": "counter", "plugin": "counter"}]"#)
            let tls = ["--tls-cert", "\(certificates.folder)/node-b.pem", "--tls-key", "\(certificates.folder)/node-b.key", "--tls-ca", ca]
            let b = try await cluster.launch("b", arguments: Base.arguments("b", in: folder, tls: tls))
            let address = try await Self.address(of: b)
            // The CA file now holds a foreign cluster's CA only: it trusts neither b nor b's peers.
            try FileManager.default.removeItem(atPath: ca)
            try FileManager.default.copyItem(atPath: "\(certificates.folder)/other/ca.pem", toPath: ca)
            b.process.signal(SIGHUP)
            #expect(await b.waitForLine(containing: "TLS files not reloaded"), "\(b.process.text)")
            #expect(b.process.text.contains("does not verify this node's own certificate"), "\(b.process.text)")
            #expect(!b.process.text.contains("new links use them"), "\(b.process.text)")
            // New links still use the CA in force before.
            let console = try await ControlClient.connect(to: address, tls: try certificates.context("operator-alice"), timeout: .seconds(10))
            #expect(try await console.request(.status).objectValue?["nodes"] != nil)
            await console.close()
        }
    }
}
