import CordisWire
import Testing

/// Links over TCP with TLS in process (certificates from `deploy/make-certs.sh`): the TLS layer is the
/// connection's stream filter on both the dialled and the accepted side, the handshake runs the `tls`
/// scheme with names checked against the certificates, and frames carry no MAC of their own.
@Suite("TLS links", .serialized)
struct TLSLinkTests {
    static func configuration(_ name: String, role: PeerRole = .node, tls: TLSContext) -> HandshakeConfiguration {
        HandshakeConfiguration(
            identity: PeerIdentity(role: role, name: name, incarnation: "\(name)-1"), secrets: nil, tls: tls)
    }

    /// Runs `body` with a fresh event loop, stopped once `body` is done (the links it made live on it).
    static func withLoop(_ body: (EventLoop) async throws -> Void) async throws {
        let loop = try EventLoop()
        do {
            try await body(loop)
        } catch {
            await loop.shutdown()
            throw error
        }
        await loop.shutdown()
    }

    /// Dials `b`'s TLS listener on `loop` as `name` holding `holder`'s certificate; returns both ends'
    /// outcomes.
    static func dial(
        _ certificates: TLSEngineTests.Certificates, as name: String, role: PeerRole = .node, holding holder: String,
        on loop: EventLoop
    ) async throws -> (client: Result<Link, any Error>, server: Result<Link, any Error>) {
        let listener = try loop.listen(
            on: .tcp(host: "127.0.0.1", port: 0), options: ListenerOptions(tls: try certificates.context("node-b")))
        let serverTask = Task { () throws -> Link in
            let connection = try await accept(listener)
            #expect(connection.tls != nil)
            return try await Link.establish(
                connection, side: .responder, configuration: Self.configuration("b", tls: try certificates.context("node-b")),
                options: LinkOptions(failureDelay: .zero))
        }
        let client = await Self.outcome {
            try await withDeadline("client handshake") {
                try await Link.connect(
                    to: listener.address, on: loop,
                    configuration: Self.configuration(name, role: role, tls: try certificates.context(holder)))
            }
        }
        let server = await Self.outcome { try await withDeadline("server handshake") { try await serverTask.value } }
        return (client, server)
    }

    static func outcome(_ body: () async throws -> Link) async -> Result<Link, any Error> {
        do {
            return .success(try await body())
        } catch {
            return .failure(error)
        }
    }

    @Test("two TLS ends link with the tls scheme, both named by their certificates, and frames carry no MAC")
    func linkOverTLS() async throws {
        let certificates = try await TLSEngineTests.Certificates()
        try await Self.withLoop { loop in
            let (client, server) = try await Self.dial(certificates, as: "a", holding: "node-a", on: loop)
            let dialled = try client.get()
            let accepted = try server.get()
            #expect(dialled.handshake.certificate == TLSPeerName(.node, "b"))
            #expect(accepted.handshake.certificate == TLSPeerName(.node, "a"))
            #expect(!dialled.handshake.isAuthenticated && dialled.handshake.keys == nil)
            #expect(accepted.handshake.isTLS)
            try await dialled.send(.ping(id: 7))
            try await accepted.send(.result(RemoteResult(id: 1, value: 42)))
            let received = try await withDeadline("a message") { () async throws -> WireMessage? in
                for try await message in dialled.messages { return message }
                return nil
            }
            #expect(received == .result(RemoteResult(id: 1, value: 42)))
        }
    }

    @Test("a node whose handshake name is not its certificate's is refused by the accepting side")
    func handshakeNameMustMatchCertificate() async throws {
        let certificates = try await TLSEngineTests.Certificates()
        try await Self.withLoop { loop in
            let (client, server) = try await Self.dial(certificates, as: "c", holding: "node-a", on: loop)
            #expect(throws: (any Error).self) { try client.get() }
            do {
                _ = try server.get()
                Issue.record("the accepting side admitted a node named c holding a's certificate")
            } catch let error as WireError {
                #expect(error.message.contains("names cordis://node/c but its certificate names cordis://node/a"), "\(error)")
            }
        }
    }

    @Test("a console's handshake name must be its certificate's operator name")
    func consoleIsNamedByItsOperatorCertificate() async throws {
        let certificates = try await TLSEngineTests.Certificates()
        try await Self.withLoop { loop in
            let (client, server) = try await Self.dial(certificates, as: "alice", role: .console, holding: "operator-alice", on: loop)
            #expect(try server.get().peer.name == "alice")
            #expect(try server.get().handshake.certificate == TLSPeerName(.operator, "alice"))
            _ = try client.get()
            let (impostor, refused) = try await Self.dial(certificates, as: "bob", role: .console, holding: "operator-alice", on: loop)
            #expect(throws: (any Error).self) { try impostor.get() }
            #expect(throws: (any Error).self) { try refused.get() }
        }
    }
}
