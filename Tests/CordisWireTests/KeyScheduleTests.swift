import Testing
@testable import CordisWire

/// The test vectors of docs/wire-protocol.md, computed there independently (the Python script in
/// section 5, with Python's hmac module).
@Suite("Key schedule test vectors")
struct KeyScheduleTests {
    let initiatorTranscript = KeySchedule.initiatorTranscript(
        initiator: WireFixtures.nodeA, initiatorNonce: WireFixtures.nonceA, responderNonce: WireFixtures.nonceB)
    let transcript = KeySchedule.transcript(
        initiator: WireFixtures.nodeA, initiatorNonce: WireFixtures.nonceA,
        responder: WireFixtures.nodeB, responderNonce: WireFixtures.nonceB)

    static let nonces = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"
        + "202122232425262728292a2b2c2d2e2f303132333435363738393a3b3c3d3e3f"
    static let identityA = "000161" + "00046e6f6465" + "0003612d31" + "0003312e31"
        + "00010017756e69783a2f72756e2f636f726469732f612e736f636b" + "0001000572656c6179"
    static let identityB = "000162" + "00046e6f6465" + "0003622d37" + "0003312e31"
        + "000100117463703a31302e302e302e323a37303030" + "0000"

    @Test("the transcripts, proofs and frame keys match the documented vectors")
    func documentedVectors() throws {
        #expect(Hex.string(initiatorTranscript) == Self.nonces + Self.identityA)
        #expect(Hex.string(transcript) == Self.nonces + Self.identityA + Self.identityB)
        let key = try secret(secretOne)
        #expect(Hex.string(try KeySchedule.proof(initiator: true, secret: key, transcript: initiatorTranscript))
            == "78f5c5f8b6b8cf93200af351cd10d5d2ca347403b34d23d80688e5392ff4a5a4")
        #expect(Hex.string(try KeySchedule.proof(initiator: false, secret: key, transcript: transcript))
            == "d4dc82b6a48ac2c13e3f5c0a61d9e81a83aeb40fbdcafb9f1252b51a62913d66")
        let keys = try KeySchedule.sessionKeys(secret: key, transcript: transcript, forInitiator: true)
        #expect(Hex.string(keys.sending) == "5e8a75f6e1e1c13e00fcd0d0eaac5aae17347fa1d5aee3f72da1807f75cc225f")
        #expect(Hex.string(keys.receiving) == "35a4fe9ba0d32e32e4f5ac017e6a6ddb0afb77129262ff140b017fae69dd0b89")
    }

    @Test("a handshake run with the documented nonces sends the documented proofs")
    func handshakeUsesTheSchedule() throws {
        var initiator = Handshake(
            side: .initiator, configuration: try configuration(WireFixtures.nodeA, secrets: [secretOne]),
            nonce: WireFixtures.nonceA)
        var responder = Handshake(
            side: .responder, configuration: try configuration(WireFixtures.nodeB, secrets: [secretOne]),
            nonce: WireFixtures.nonceB)
        _ = responder.start()
        let hello = try #require(initiator.start().first)
        let challenge = try #require(responder.receive(hello).messages.first)
        #expect(challenge == .challenge(Challenge(nonce: WireFixtures.nonceB)))
        let proof = try #require(initiator.receive(challenge).messages.first)
        #expect(proof == .proof(try #require(Hex.decode(
            "78f5c5f8b6b8cf93200af351cd10d5d2ca347403b34d23d80688e5392ff4a5a4".utf8, count: 32))))
        let welcome = try #require(responder.receive(proof).messages.first)
        guard case .welcome(let body) = welcome else {
            Issue.record("expected a welcome")
            return
        }
        #expect(body.identity == WireFixtures.nodeB)
        #expect(body.proof.map(Hex.string) == "d4dc82b6a48ac2c13e3f5c0a61d9e81a83aeb40fbdcafb9f1252b51a62913d66")
        #expect(initiator.receive(welcome).result?.peer == WireFixtures.nodeB)
    }

    @Test("the first sealed frame of the initiator matches the documented bytes")
    func documentedSealedFrame() throws {
        let keys = try KeySchedule.sessionKeys(secret: secret(secretOne), transcript: transcript, forInitiator: true)
        var codec = SessionCodec(keys: keys)
        var buffer: [UInt8] = []
        try codec.append(.ping(id: 17), to: &buffer)
        let expected = #"{"seq":0,"mac":"bb9724bd2e7ee00573d87e2fbc1042c7327d6bddf27316b67ed02e763437fdb1","type":"ping","id":17}"#
        #expect(Array(buffer.prefix(4)) == [0x00, 0x00, 0x00, 0x68])
        #expect(String(decoding: buffer.dropFirst(4), as: UTF8.self) == expected)
        let responderKeys = try KeySchedule.sessionKeys(secret: secret(secretOne), transcript: transcript, forInitiator: false)
        var responder = SessionCodec(keys: responderKeys)
        #expect(try responder.decode(Frame(payload: Array(expected.utf8))) == .ping(id: 17))
    }
}
