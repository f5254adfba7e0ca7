import Testing
@testable import CordisWire

/// Runs two handshakes against each other, message by message, within a bounded number of steps.
struct HandshakeRun {
    var initiator: Handshake
    var responder: Handshake
    var initiatorOutcome: HandshakeStep?
    var responderOutcome: HandshakeStep?
    /// Every message sent, in order, with the side that sent it.
    var transcript: [(fromInitiator: Bool, message: WireMessage)] = []

    init(initiator: HandshakeConfiguration, responder: HandshakeConfiguration) throws {
        self.initiator = try Handshake(side: .initiator, configuration: initiator)
        self.responder = try Handshake(side: .responder, configuration: responder)
    }

    mutating func run() {
        var toResponder = initiator.start()
        _ = responder.start()
        var toInitiator: [WireMessage] = []
        for _ in 0 ..< 10 {
            guard !toResponder.isEmpty || !toInitiator.isEmpty else { return }
            for message in toResponder {
                transcript.append((true, message))
                let step = responder.receive(encodeAndDecode(message))
                toInitiator += step.messages
                if case .proceed = step {} else { responderOutcome = step }
            }
            toResponder = []
            for message in toInitiator {
                transcript.append((false, message))
                let step = initiator.receive(encodeAndDecode(message))
                toResponder += step.messages
                if case .proceed = step {} else { initiatorOutcome = step }
            }
            toInitiator = []
        }
    }

    /// Messages travel as real frames, so the handshake sees what a peer would send.
    func encodeAndDecode(_ message: WireMessage) -> Frame {
        var buffer: [UInt8] = []
        var decoder = FrameDecoder(maxFrameSize: Handshake.maxFrameSize)
        do {
            try FrameEncoder(maxFrameSize: Handshake.maxFrameSize).append(message, to: &buffer)
            decoder.feed(buffer)
            if let frame = try decoder.next() { return frame }
        } catch {
            Issue.record("handshake message did not encode: \(error)")
        }
        return Frame(payload: [])
    }
}

extension HandshakeStep {
    var result: HandshakeResult? {
        if case .established(_, let result) = self { return result }
        return nil
    }

    var error: WireError? {
        if case .failed(_, let error) = self { return error }
        return nil
    }
}

func secret(_ text: String) throws -> ClusterSecret {
    try ClusterSecret(bytes: Array(text.utf8))
}

let secretOne = "0123456789abcdef0123456789abcdef-one"
let secretTwo = "0123456789abcdef0123456789abcdef-two"

func configuration(
    _ identity: PeerIdentity, secrets: [String]?, admit: (@Sendable (PeerIdentity) -> Rejection?)? = nil
) throws -> HandshakeConfiguration {
    let loaded = try secrets.map { list in
        try ClusterSecrets(proving: secret(list[0]), alsoAccepting: list.count > 1 ? secret(list[1]) : nil)
    }
    return HandshakeConfiguration(identity: identity, secrets: loaded, admit: admit)
}

@Suite("Handshake")
struct HandshakeTests {
    let a = WireFixtures.nodeA
    let b = WireFixtures.nodeB

    @Test("two sides with the same secret authenticate each other and agree on frame keys")
    func authenticatedHandshake() throws {
        var run = try HandshakeRun(
            initiator: configuration(a, secrets: [secretOne]), responder: configuration(b, secrets: [secretOne]))
        run.run()
        let initiator = try #require(run.initiatorOutcome?.result)
        let responder = try #require(run.responderOutcome?.result)
        #expect(initiator.peer == b)
        #expect(responder.peer == a)
        #expect(initiator.isAuthenticated && responder.isAuthenticated)
        #expect(run.transcript.map(\.message.type) == ["hello", "challenge", "proof", "welcome"])
        let keysI = try #require(initiator.keys)
        let keysR = try #require(responder.keys)
        #expect(keysI.sending == keysR.receiving)
        #expect(keysI.receiving == keysR.sending)
        #expect(keysI.sending != keysI.receiving)
    }

    @Test("without secrets on either side the handshake is hello then welcome, unauthenticated")
    func unauthenticatedHandshake() throws {
        var run = try HandshakeRun(initiator: configuration(a, secrets: nil), responder: configuration(b, secrets: nil))
        run.run()
        let initiator = try #require(run.initiatorOutcome?.result)
        let responder = try #require(run.responderOutcome?.result)
        #expect(initiator.peer == b && responder.peer == a)
        #expect(!initiator.isAuthenticated && !responder.isAuthenticated)
        #expect(run.transcript.map(\.message.type) == ["hello", "welcome"])
    }

    @Test("a wrong secret fails the handshake with badMAC and the responder proves nothing")
    func wrongSecret() throws {
        var run = try HandshakeRun(
            initiator: configuration(a, secrets: [secretTwo]), responder: configuration(b, secrets: [secretOne]))
        run.run()
        #expect(run.responderOutcome?.error?.code == .badMAC)
        #expect(run.initiatorOutcome?.error?.code == .rejected)
        #expect(!run.transcript.contains { $0.message.type == "welcome" })
        guard case .reject(let rejection)? = run.transcript.last?.message else {
            Issue.record("expected a reject last")
            return
        }
        #expect(rejection.reason == "authentication failed")
    }

    @Test("a side without a secret cannot talk to a side that requires one, whichever dials")
    func missingSecret() throws {
        var dialsWithout = try HandshakeRun(
            initiator: configuration(a, secrets: nil), responder: configuration(b, secrets: [secretOne]))
        dialsWithout.run()
        #expect(dialsWithout.responderOutcome?.error?.code == .authenticationRequired)
        #expect(dialsWithout.initiatorOutcome?.error?.code == .rejected)
        var acceptsWithout = try HandshakeRun(
            initiator: configuration(a, secrets: [secretOne]), responder: configuration(b, secrets: nil))
        acceptsWithout.run()
        #expect(acceptsWithout.responderOutcome?.error?.code == .authenticationRequired)
        #expect(acceptsWithout.initiatorOutcome?.result == nil)
    }

    @Test("during a rotation the first secret proves and either is accepted")
    func rotation() throws {
        // Step 2 of a rotation: a already proves with the new secret, b still with the old one.
        var run = try HandshakeRun(
            initiator: configuration(a, secrets: [secretTwo, secretOne]),
            responder: configuration(b, secrets: [secretOne, secretTwo]))
        run.run()
        let initiator = try #require(run.initiatorOutcome?.result)
        let responder = try #require(run.responderOutcome?.result)
        #expect(initiator.keys?.sending == responder.keys?.receiving)
        // A node that only knows the old secret refuses a proof made with the new one.
        var stale = try HandshakeRun(
            initiator: configuration(a, secrets: [secretTwo]), responder: configuration(b, secrets: [secretOne]))
        stale.run()
        #expect(stale.responderOutcome?.error?.code == .badMAC)
    }

    @Test("a recorded handshake replayed to a fresh responder fails")
    func replayedHandshake() throws {
        var recorded = try HandshakeRun(
            initiator: configuration(a, secrets: [secretOne]), responder: configuration(b, secrets: [secretOne]))
        recorded.run()
        #expect(recorded.initiatorOutcome?.result != nil)
        var fresh = try Handshake(side: .responder, configuration: configuration(b, secrets: [secretOne]))
        _ = fresh.start()
        var outcome: HandshakeStep?
        for entry in recorded.transcript where entry.fromInitiator {
            outcome = fresh.receive(entry.message)
        }
        #expect(outcome?.error?.code == .badMAC)
    }

    @Test("a responder's proof reflected back as an initiator's proof fails")
    func reflectedProof() throws {
        // The attacker dials b claiming to be a, and wants b to accept a proof b itself computed.
        let config = try configuration(b, secrets: [secretOne])
        var victim = Handshake(side: .responder, configuration: config, nonce: WireFixtures.nonceB)
        _ = victim.start()
        let hello = Hello(identity: a, nonce: WireFixtures.nonceA, auth: .hmacSHA256)
        guard case .proceed(let sent) = victim.receive(.hello(hello)), case .challenge(let challenge)? = sent.first else {
            Issue.record("expected a challenge")
            return
        }
        // The responder's proof over the very same transcript, as b would send it in its welcome.
        let transcript = KeySchedule.transcript(
            initiator: a, initiatorNonce: WireFixtures.nonceA, responder: b, responderNonce: challenge.nonce)
        let responderProof = try KeySchedule.proof(initiator: false, secret: secret(secretOne), transcript: transcript)
        #expect(victim.receive(.proof(responderProof)).error?.code == .badMAC)
        // And the nonce echoed back is refused outright.
        var echo = Handshake(side: .responder, configuration: config, nonce: WireFixtures.nonceB)
        _ = echo.start()
        let echoed = echo.receive(.hello(Hello(identity: a, nonce: WireFixtures.nonceB, auth: .hmacSHA256)))
        #expect(echoed.error?.code == .replay)
    }

    @Test("a peer using this side's own name is refused")
    func ownName() throws {
        var run = try HandshakeRun(
            initiator: configuration(a, secrets: [secretOne]), responder: configuration(a, secrets: [secretOne]))
        run.run()
        #expect(run.responderOutcome?.error?.code == .notAdmitted)
    }

    @Test("a hello with another major version is answered with a version-mismatch reject (its version, 2.3, reads the 1.5 spelling)")
    func versionMismatch() throws {
        var responder = try Handshake(side: .responder, configuration: configuration(b, secrets: nil))
        _ = responder.start()
        let json = #"{"type":"hello","version":"2.3","role":"node","name":"a","incarnation":"i","addresses":[],"capabilities":[],"nonce":"\#(WireFixtures.hexA)","auth":"none"}"#
        let step = responder.receive(Frame(payload: Array(json.utf8)))
        #expect(step.error?.code == .versionMismatch)
        guard case .reject(let rejection)? = step.messages.first else {
            Issue.record("expected a reject")
            return
        }
        #expect(rejection.code == "version-mismatch")
        #expect(rejection.reason.contains("2.3"))
        // The minor version is negotiated down.
        var newer = b
        newer.version = ProtocolVersion(major: 1, minor: 4)
        var run = try HandshakeRun(initiator: configuration(a, secrets: nil), responder: configuration(newer, secrets: nil))
        run.run()
        #expect(run.initiatorOutcome?.result?.version == a.version)
    }

    @Test("anything but the next expected message fails the handshake", arguments: [
        WireMessage.ping(id: 1), .call(RemoteCall(id: 1, service: "s", realm: nil, method: "m", args: [:])),
        .proof(WireFixtures.proof), .welcome(Welcome(proof: WireFixtures.proof)),
        .unknown(type: "x", body: ["type": "x"]),
    ])
    func unexpectedMessage(_ message: WireMessage) throws {
        var responder = try Handshake(side: .responder, configuration: configuration(b, secrets: [secretOne]))
        _ = responder.start()
        let step = responder.receive(message)
        #expect(step.error?.code == .unexpectedMessage)
        #expect(responder.isFinished)
        #expect(responder.receive(.hello(Hello(identity: a, nonce: WireFixtures.nonceA, auth: .hmacSHA256))).error != nil)
        // The initiator likewise refuses a message other than challenge or welcome.
        var initiator = try Handshake(side: .initiator, configuration: configuration(a, secrets: [secretOne]))
        _ = initiator.start()
        // (a welcome without a challenge skips authentication, which this side requires)
        let expected: WireError.Code = message.type == "welcome" ? .authenticationRequired : .unexpectedMessage
        #expect(initiator.receive(message).error?.code == expected)
    }

    @Test("a frame that does not decode fails the handshake")
    func undecodableFrame() throws {
        var responder = try Handshake(side: .responder, configuration: configuration(b, secrets: nil))
        #expect(responder.receive(Frame(payload: Array("{nope".utf8))).error?.code == .malformedJSON)
    }

    @Test("the admission check can refuse an authenticated peer, with its own code")
    func admission() throws {
        let refuse: @Sendable (PeerIdentity) -> Rejection? = { peer in
            peer.name == "a" ? Rejection(code: "nameTaken", reason: "a live member holds the name a") : nil
        }
        var run = try HandshakeRun(
            initiator: configuration(a, secrets: [secretOne]), responder: configuration(b, secrets: [secretOne], admit: refuse))
        run.run()
        #expect(run.responderOutcome?.error?.code == .nameTaken)
        #expect(run.initiatorOutcome?.error?.code == .rejected)
        #expect(run.initiatorOutcome?.error?.message.contains("a live member") == true)
    }

    /// What a man in the middle rewrites in the handshake's identities.
    enum Tampering: String, CaseIterable, Sendable {
        case nothing, helloAddresses, helloCapabilities, welcomeAddresses, welcomeCapabilities, helloVersion, welcomeName
    }

    @Test("a man in the middle who alters addresses, capabilities or the version in transit makes the proof fail",
          arguments: Tampering.allCases)
    func tamperedIdentity(_ tampering: Tampering) throws {
        var initiator = try Handshake(side: .initiator, configuration: configuration(a, secrets: [secretOne]))
        var responder = try Handshake(side: .responder, configuration: configuration(b, secrets: [secretOne]))
        _ = responder.start()
        guard case .hello(var hello)? = initiator.start().first else {
            Issue.record("expected a hello")
            return
        }
        switch tampering {
        case .helloAddresses: hello.identity.addresses = ["tcp:203.0.113.9:7000"]
        case .helloCapabilities: hello.identity.capabilities = []
        case .helloVersion: hello.identity.version = ProtocolVersion(major: 1, minor: 7)
        default: break
        }
        guard case .challenge(let challenge)? = responder.receive(.hello(hello)).messages.first else {
            Issue.record("expected a challenge")
            return
        }
        guard case .proof(let proof)? = initiator.receive(.challenge(challenge)).messages.first else {
            Issue.record("expected a proof")
            return
        }
        let verdict = responder.receive(.proof(proof))
        switch tampering {
        case .helloAddresses, .helloCapabilities, .helloVersion:
            #expect(verdict.error?.code == .badMAC)
            #expect(verdict.messages.allSatisfy { $0.type == "reject" })
            return
        default:
            break
        }
        let result = try #require(verdict.result)
        #expect(result.peer.addresses == a.addresses)
        guard case .welcome(var welcome)? = verdict.messages.first else {
            Issue.record("expected a welcome")
            return
        }
        switch tampering {
        case .welcomeAddresses: welcome.identity?.addresses.append("unix:/tmp/evil.sock")
        case .welcomeCapabilities: welcome.identity?.capabilities = ["relay"]
        case .welcomeName: welcome.identity?.name = "c"
        default: break
        }
        let accepted = initiator.receive(.welcome(welcome))
        if tampering == .nothing {
            #expect(accepted.result?.peer == b)
        } else {
            #expect(accepted.error?.code == .badMAC)
        }
    }
}
