import CordisJSON
import Testing
@testable import CordisWire

/// A responder that requires the cluster secret tells a peer who has not proved it nothing about
/// itself, and echoes nothing of unbounded size back.
@Suite("Handshake: what a stranger learns")
struct HandshakeDisclosureTests {
    static let secret = "0123456789abcdef0123456789abcdef-one"
    static let wrong = "0123456789abcdef0123456789abcdef-two"
    let responderIdentity = PeerIdentity(
        role: .node, name: "hidden-node", incarnation: "secret-incarnation-42",
        addresses: ["tcp:10.9.8.7:7000"], capabilities: ["private-capability"])
    let stranger = PeerIdentity(role: .node, name: "stranger", incarnation: "s-1")

    /// The members of the encoded message.
    func members(_ message: WireMessage) throws -> [String] {
        let value = try JSONParser().parse(message.encoded)
        return value.objectValue?.keys.sorted() ?? []
    }

    /// Everything the responder sent, as text.
    func sentText(_ run: HandshakeRun) -> String {
        run.transcript.filter { !$0.fromInitiator }.map { String(decoding: $0.message.encoded, as: UTF8.self) }
            .joined(separator: "\n")
    }

    @Test("the challenge carries only a nonce")
    func challengeCarriesOnlyNonce() throws {
        var responder = try Handshake(side: .responder, configuration: configuration(responderIdentity, secrets: [Self.secret]))
        _ = responder.start()
        let hello = WireMessage.hello(Hello(identity: stranger, nonce: Array(repeating: 7, count: 32), auth: .hmacSHA256))
        let step = responder.receive(hello)
        let challenge = try #require(step.messages.first)
        #expect(challenge.type == "challenge")
        #expect(try members(challenge) == ["nonce", "type"])
    }

    @Test("a peer with the wrong secret receives nothing that names the responder")
    func wrongSecretLearnsNothing() throws {
        var run = try HandshakeRun(
            initiator: configuration(stranger, secrets: [Self.wrong]),
            responder: configuration(responderIdentity, secrets: [Self.secret]))
        run.run()
        #expect(run.responderOutcome?.error?.code == .badMAC)
        let sent = sentText(run)
        for secretThing in ["hidden-node", "secret-incarnation-42", "10.9.8.7", "private-capability", "\"version\""] {
            #expect(!sent.contains(secretThing), "the responder revealed \(secretThing): \(sent)")
        }
    }

    @Test("a stranger guessing the responder's name is refused as unauthenticated, not told the name is taken")
    func guessedNameIsNotConfirmed() throws {
        let impostor = PeerIdentity(role: .node, name: "hidden-node", incarnation: "x-1")
        var run = try HandshakeRun(
            initiator: configuration(impostor, secrets: [Self.wrong]),
            responder: configuration(responderIdentity, secrets: [Self.secret]))
        run.run()
        #expect(run.responderOutcome?.error?.code == .badMAC)
        #expect(!sentText(run).contains("hidden-node"))
    }

    @Test("a stranger probing for a role gets the same answer as for any other failure")
    func refusedRoleIsNotConfirmed() throws {
        var responderConfiguration = try configuration(responderIdentity, secrets: [Self.secret])
        responderConfiguration.acceptedRoles = [.node]
        let console = PeerIdentity(role: .console, name: "probe", incarnation: "p-1")
        var run = try HandshakeRun(
            initiator: configuration(console, secrets: [Self.wrong]), responder: responderConfiguration)
        run.run()
        #expect(run.responderOutcome?.error?.code == .badMAC)
    }

    @Test("the responder's identity reaches the initiator in the welcome, after its proof")
    func identityComesInTheWelcome() throws {
        var run = try HandshakeRun(
            initiator: configuration(stranger, secrets: [Self.secret]),
            responder: configuration(responderIdentity, secrets: [Self.secret]))
        run.run()
        #expect(run.initiatorOutcome?.result?.peer == responderIdentity)
        #expect(run.responderOutcome?.result?.peer == stranger)
        guard case .welcome(let welcome)? = run.transcript.last?.message else {
            Issue.record("the last message is not a welcome")
            return
        }
        #expect(welcome.identity == responderIdentity)
        #expect(welcome.proof != nil)
    }

    @Test("the protocol version is 1.5")
    func versionIsBumped() {
        #expect(ProtocolVersion.current == ProtocolVersion(major: 1, minor: 5))
    }

    @Test("a 60 KB number in a hello is not echoed back in the reject", arguments: ["number", "key", "name", "type"])
    func rejectReasonIsBounded(kind: String) throws {
        var responder = try Handshake(side: .responder, configuration: configuration(responderIdentity, secrets: [Self.secret]))
        _ = responder.start()
        let huge = String(repeating: "9", count: 60_000)
        let json: String
        switch kind {
        case "number": json = #"{"type":"hello","version":"1.2","big":"# + huge + "e99999}"
        case "key": json = #"{"type":"hello",""# + huge + #"":1,""# + huge + #"":2}"#
        case "name": json = #"{"type":"hello","version":"1.2","role":"node","name":""# + huge + #"","incarnation":"i","addresses":[],"capabilities":[],"nonce":"00","auth":"hmac-sha256"}"#
        default: json = #"{"type":""# + huge + #""}"#
        }
        let step = responder.receive(Frame(payload: Array(json.utf8)))
        guard case .failed(let send, let error) = step else {
            Issue.record("expected a failure, got \(step)")
            return
        }
        guard case .reject(let rejection)? = send.first else {
            Issue.record("expected a reject")
            return
        }
        #expect(rejection.reason.utf8.count <= Rejection.maximumReasonLength)
        #expect(rejection.code.utf8.count <= 64)
        #expect(error.message.utf8.count <= 1024)
    }
}
