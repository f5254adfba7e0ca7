import Testing
@testable import CordisWire

/// `LinkCodec`: what a link makes of each frame it receives, bytes in and verdicts out, with no socket.
@Suite("LinkCodec: a link's frames, from the handshake to the end")
struct LinkCodecTests {
    /// Two link codecs that ran their handshake against each other, frame by frame, and the sending codec
    /// each was given.
    struct Pair {
        var initiator: LinkCodec
        var responder: LinkCodec
        var initiatorSends: SessionCodec
        var responderSends: SessionCodec
    }

    /// Runs the handshake of an initiator and a responder (with `secrets`, else unauthenticated) through
    /// two codecs; fails the test unless both established the link.
    static func established(
        secrets: [String]? = [secretOne], responderVersion: ProtocolVersion = .current, deliversPongs: Bool = false
    ) throws -> Pair {
        var initiatorIdentity = WireFixtures.nodeA
        initiatorIdentity.version = .current
        var responderIdentity = WireFixtures.nodeB
        responderIdentity.version = responderVersion
        var initiatorHandshake = try Handshake(side: .initiator, configuration: configuration(initiatorIdentity, secrets: secrets))
        var responderHandshake = try Handshake(side: .responder, configuration: configuration(responderIdentity, secrets: secrets))
        var toResponder = initiatorHandshake.start()
        var toInitiator = responderHandshake.start()
        var initiator = LinkCodec(handshake: initiatorHandshake, deliversPongs: deliversPongs)
        var responder = LinkCodec(handshake: responderHandshake, deliversPongs: deliversPongs)
        var initiatorSends: SessionCodec?
        var responderSends: SessionCodec?
        for _ in 0 ..< 10 where !toResponder.isEmpty || !toInitiator.isEmpty {
            for message in toResponder {
                switch responder.receive(message.encoded) {
                case .proceed(let send): toInitiator += send
                case .established(let send, _, let codec): toInitiator += send; responderSends = codec
                case let other: Issue.record("the responder's handshake went \(other)")
                }
            }
            toResponder = []
            for message in toInitiator {
                switch initiator.receive(message.encoded) {
                case .proceed(let send): toResponder += send
                case .established(let send, _, let codec): toResponder += send; initiatorSends = codec
                case let other: Issue.record("the initiator's handshake went \(other)")
                }
            }
            toInitiator = []
        }
        return Pair(
            initiator: initiator, responder: responder,
            initiatorSends: try #require(initiatorSends), responderSends: try #require(responderSends))
    }

    /// The payload of the one frame `codec` writes for `message`.
    static func sealed(_ message: WireMessage, by codec: inout SessionCodec) throws -> [UInt8] {
        var bytes: [UInt8] = []
        try codec.append(message, to: &bytes)
        var decoder = FrameDecoder()
        decoder.feed(bytes)
        return try #require(try decoder.next()).payload
    }

    @Test("the handshake establishes both sides once; the result is held, and giving up comes too late")
    func handshakeEstablishes() throws {
        var pair = try Self.established()
        #expect(pair.initiator.result?.peer.name == WireFixtures.nodeB.name)
        #expect(pair.responder.result?.peer.name == WireFixtures.nodeA.name)
        #expect(pair.initiator.result?.isAuthenticated == true)
        #expect(!pair.initiator.isHandshaking)
        let gaveUp = pair.initiator.abandonHandshake()
        #expect(!gaveUp && pair.initiator.result != nil)
    }

    @Test("sealed messages are delivered in order; a ping is answered with its pong; a pong is dropped unless asked for")
    func messagesAndHeartbeats() throws {
        for deliversPongs in [false, true] {
            var pair = try Self.established(deliversPongs: deliversPongs)
            let call = WireMessage.goodbye(reason: "first")
            guard case .decoded(let first, .deliver) = pair.responder.receive(try Self.sealed(call, by: &pair.initiatorSends)) else {
                Issue.record("the first message was not delivered")
                return
            }
            #expect(first == call)
            guard case .decoded(.ping(7), .answer(let answer)) = pair.responder.receive(try Self.sealed(.ping(id: 7), by: &pair.initiatorSends)) else {
                Issue.record("the ping was not answered")
                return
            }
            #expect(answer == .pong(id: 7))
            guard case .decoded(.pong(7), let reaction) = pair.responder.receive(try Self.sealed(.pong(id: 7), by: &pair.initiatorSends)) else {
                Issue.record("the pong was not decoded")
                return
            }
            #expect(reaction == (deliversPongs ? .deliver : .drop))
        }
    }

    @Test("an unknown type is answered with unknown-type, spelled for the version the link speaks, and the link stays")
    func unknownType() throws {
        for (version, code) in [(ProtocolVersion.current, "unknown-type"), (ProtocolVersion(major: 1, minor: 4), "unknownType")] {
            var pair = try Self.established(secrets: nil, responderVersion: version)
            let frobnicate = WireMessage.unknown(type: "frobnicate", body: ["type": "frobnicate"])
            guard case .decoded(_, .answer(.error(let error))) = pair.initiator.receive(try Self.sealed(frobnicate, by: &pair.responderSends)) else {
                Issue.record("the unknown type was not answered")
                return
            }
            #expect(error.code == code)
            guard case .decoded(_, .deliver) = pair.initiator.receive(try Self.sealed(.goodbye(reason: nil), by: &pair.responderSends)) else {
                Issue.record("the link did not stay up")
                return
            }
        }
    }

    @Test("an altered or replayed frame ends the link with a bad-mac or replay notice; nothing is read after")
    func forgedFrames() throws {
        var altered = try Self.established()
        var payload = try Self.sealed(.ping(id: 1), by: &altered.initiatorSends)
        payload[payload.count - 2] ^= 0x01
        guard case .refuse(let badMAC, .error(let notice)?) = altered.responder.receive(payload) else {
            Issue.record("the altered frame was not refused")
            return
        }
        #expect(badMAC.code == .badMAC && notice.code == "bad-mac")
        guard case .consume = altered.responder.receive(try Self.sealed(.ping(id: 2), by: &altered.initiatorSends)) else {
            Issue.record("a frame was read after the end")
            return
        }
        #expect(altered.responder.result != nil)

        var replayed = try Self.established()
        let first = try Self.sealed(.ping(id: 1), by: &replayed.initiatorSends)
        guard case .decoded = replayed.responder.receive(first), case .refuse(let replay, .error(let again)?) = replayed.responder.receive(first) else {
            Issue.record("the replayed frame was not refused")
            return
        }
        #expect(replay.code == .replay && again.code == "replay")
    }

    @Test("the peer's own error notice, unsealed, ends the link with the peer's code and no notice back")
    func peersNotice() throws {
        var pair = try Self.established()
        let notice = WireMessage.error(RemoteError(id: nil, code: "bad-length", message: "frame too large"))
        guard case .refuse(let error, nil) = pair.responder.receive(notice.encoded) else {
            Issue.record("the peer's notice was not taken as the end")
            return
        }
        #expect(error.code == .rejected && error.peerCode == .badLength)
    }

    @Test("a refused handshake fails once, with the reject to send; a handshake given up reads nothing more")
    func refusedAndAbandoned() throws {
        var initiatorHandshake = try Handshake(side: .initiator, configuration: configuration(WireFixtures.nodeA, secrets: [secretTwo]))
        let responderHandshake = try Handshake(side: .responder, configuration: configuration(WireFixtures.nodeB, secrets: [secretOne]))
        var responder = LinkCodec(handshake: responderHandshake)
        let hello = try #require(initiatorHandshake.start().first)
        guard case .proceed(let challenge) = responder.receive(hello.encoded) else {
            Issue.record("the responder did not challenge")
            return
        }
        var proofs: [WireMessage] = []
        for message in challenge {
            if case .proceed(let send) = initiatorHandshake.receive(Frame(payload: message.encoded)) { proofs += send }
        }
        let proof = try #require(proofs.first)
        guard case .failed(let send, let error) = responder.receive(proof.encoded) else {
            Issue.record("the wrong secret was not refused")
            return
        }
        #expect(error.code == .badMAC)
        #expect(send.contains { if case .reject = $0 { true } else { false } })
        let gaveUp = responder.abandonHandshake()
        #expect(!gaveUp && responder.result == nil)

        var abandoned = LinkCodec(handshake: try Handshake(side: .responder, configuration: configuration(WireFixtures.nodeB, secrets: nil)))
        let first = abandoned.abandonHandshake()
        let again = abandoned.abandonHandshake()
        #expect(first && !again)
        guard case .consume = abandoned.receive(hello.encoded) else {
            Issue.record("a handshake given up read a frame")
            return
        }
    }
}
