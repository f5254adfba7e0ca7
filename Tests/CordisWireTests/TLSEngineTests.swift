import CordisProcessTesting
import CordisWire
import Foundation
import Testing

/// The TLS engine in process: two engines pumping bytes to each other, with certificates made by
/// `deploy/make-certs.sh`: a good mutual handshake names both peers and carries data encrypted; a
/// certificate from another CA, an expired one, one naming another node, or none is refused; bytes
/// that are not TLS fail the session cleanly.
@Suite("TLS engine", .serialized)
struct TLSEngineTests {
    /// Certificates for one run: CA `ca` with nodes a and b and operator alice; CA `other` with a node a.
    final class Certificates: Sendable {
        let folder: String

        init() async throws {
            folder = NSTemporaryDirectory() + "cordis-tls-\(UUID().uuidString.prefix(8))"
            let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                .deletingLastPathComponent().appendingPathComponent("deploy/make-certs.sh").path
            for arguments in [["ca"], ["node", "a"], ["node", "b"], ["operator", "alice"]] {
                try await Self.run(script, [folder] + arguments)
            }
            try await Self.run(script, [folder + "/other", "ca", "other-ca"])
            try await Self.run(script, [folder + "/other", "node", "a"])
        }

        static func run(_ script: String, _ arguments: [String]) async throws {
            let (ended, output) = try await ChildProcess.run(URL(fileURLWithPath: "/bin/sh"), [script] + arguments, deadline: .seconds(60))
            #expect(ended?.status == 0, "make-certs.sh \(arguments): \(output)")
        }

        func context(_ holder: String, ca: String = "ca.pem", in subfolder: String = "", at time: Int64? = nil) throws -> TLSContext {
            let base = folder + subfolder + "/" + holder
            return try TLSContext(TLSConfiguration(
                certificateFile: base + ".pem", keyFile: base + ".key", caFile: folder + "/" + ca, verificationTime: time))
        }

        deinit { try? FileManager.default.removeItem(atPath: folder) }
    }

    /// Moves bytes between the engines until neither has anything to send (bounded); returns every
    /// byte that crossed, for inspection.
    @discardableResult
    static func pump(_ client: TLSEngine, _ server: TLSEngine, delivered: inout [UInt8], received: inout [UInt8]) -> [UInt8] {
        var wire: [UInt8] = []
        for _ in 0..<20 {
            let toServer = client.takeOutbound()
            let toClient = server.takeOutbound()
            if toServer.isEmpty && toClient.isEmpty { break }
            wire += toServer + toClient
            if !toServer.isEmpty, let data = try? server.receive(toServer) { delivered += data }
            if !toClient.isEmpty, let data = try? client.receive(toClient) { received += data }
        }
        return wire
    }

    static func pump(_ client: TLSEngine, _ server: TLSEngine) {
        var a: [UInt8] = []
        var b: [UInt8] = []
        pump(client, server, delivered: &a, received: &b)
    }

    static func failure(_ engine: TLSEngine) -> TLSError? {
        if case .failed(let error) = engine.phase { return error }
        return nil
    }

    @Test("a mutual handshake names both peers, and data crosses encrypted both ways")
    func goodHandshake() async throws {
        let certificates = try await Certificates()
        let client = try TLSEngine(context: try certificates.context("node-a"), side: .client, expecting: TLSPeerName(.node, "b"))
        let server = try TLSEngine(context: try certificates.context("node-b"), side: .server)
        Self.pump(client, server)
        #expect(client.peerName == TLSPeerName(.node, "b"))
        #expect(server.peerName == TLSPeerName(.node, "a"))
        let secret = Array("the call's argument: swordfish".utf8)
        try client.send(secret)
        var delivered: [UInt8] = []
        var received: [UInt8] = []
        let wire = Self.pump(client, server, delivered: &delivered, received: &received)
        #expect(delivered == secret)
        #expect(!wire.isEmpty && !String(decoding: wire, as: UTF8.self).contains("swordfish"))
        try server.send(Array("pong".utf8))
        Self.pump(client, server, delivered: &delivered, received: &received)
        #expect(received == Array("pong".utf8))
    }

    @Test("an operator's certificate names the operator")
    func operatorName() async throws {
        let certificates = try await Certificates()
        let client = try TLSEngine(context: try certificates.context("operator-alice"), side: .client, expecting: TLSPeerName(.node, "b"))
        let server = try TLSEngine(context: try certificates.context("node-b"), side: .server)
        Self.pump(client, server)
        #expect(server.peerName == TLSPeerName(.operator, "alice"))
    }

    @Test("a certificate from another CA is refused, and no data from it is delivered")
    func otherCA() async throws {
        let certificates = try await Certificates()
        let client = try TLSEngine(
            context: try certificates.context("node-a", ca: "ca.pem", in: "/other"), side: .client, expecting: TLSPeerName(.node, "b"))
        let server = try TLSEngine(context: try certificates.context("node-b"), side: .server)
        Self.pump(client, server)
        #expect(Self.failure(server)?.code == .certificate, "\(server.phase)")
        #expect(server.peerName == nil)
        // The client learns of the refusal and fails too.
        #expect(Self.failure(client) != nil, "\(client.phase)")
        #expect(throws: TLSError.self) { try client.send(Array("x".utf8)) }
    }

    @Test("an expired certificate is refused (the verifying side checks at a time past its end)")
    func expired() async throws {
        let certificates = try await Certificates()
        let later = Int64(Date().timeIntervalSince1970) + 2 * 365 * 86_400
        let client = try TLSEngine(context: try certificates.context("node-a"), side: .client, expecting: TLSPeerName(.node, "b"))
        let server = try TLSEngine(context: try certificates.context("node-b", at: later), side: .server)
        Self.pump(client, server)
        let error = try #require(Self.failure(server))
        #expect(error.code == .certificate)
        #expect(error.message.contains("expired"), "\(error.message)")
    }

    @Test("a certificate naming another node than the one dialled is refused")
    func wrongName() async throws {
        let certificates = try await Certificates()
        let client = try TLSEngine(context: try certificates.context("node-a"), side: .client, expecting: TLSPeerName(.node, "c"))
        let server = try TLSEngine(context: try certificates.context("node-b"), side: .server)
        Self.pump(client, server)
        let error = try #require(Self.failure(client))
        #expect(error.code == .wrongName)
        #expect(error.message.contains("cordis://node/b"))
        #expect(client.peerName == nil)
    }

    @Test("a peer without a certificate is refused")
    func missingCertificate() async throws {
        let certificates = try await Certificates()
        let client = try TLSEngine(
            context: try TLSContext(withoutCertificateTrusting: certificates.folder + "/ca.pem"), side: .client)
        let server = try TLSEngine(context: try certificates.context("node-b"), side: .server)
        Self.pump(client, server)
        let error = try #require(Self.failure(server))
        #expect(error.code == .noCertificate || error.code == .certificate, "\(error)")
        #expect(server.peerName == nil)
    }

    @Test("bytes that are not TLS fail the session cleanly, and it stays failed")
    func garbage() async throws {
        let certificates = try await Certificates()
        let server = try TLSEngine(context: try certificates.context("node-b"), side: .server)
        var generator = SystemRandomNumberGenerator()
        let noise = (0..<512).map { _ in UInt8.random(in: 0...255, using: &generator) }
        #expect(throws: TLSError.self) { _ = try server.receive(Array("GET / HTTP/1.1\r\n\r\n".utf8) + noise) }
        #expect(Self.failure(server)?.code == .handshake)
        #expect(throws: TLSError.self) { _ = try server.receive(noise) }
        // A session past its handshake fed a corrupted record fails too.
        let client = try TLSEngine(context: try certificates.context("node-a"), side: .client, expecting: TLSPeerName(.node, "b"))
        let other = try TLSEngine(context: try certificates.context("node-b"), side: .server)
        Self.pump(client, other)
        try client.send(Array("hello".utf8))
        var record = client.takeOutbound()
        record[record.count - 3] ^= 0xFF
        #expect(throws: TLSError.self) { _ = try other.receive(record) }
        #expect(Self.failure(other) != nil)
    }
}
