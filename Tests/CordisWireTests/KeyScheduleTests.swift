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
    static let identityA = "000161" + "00046e6f6465" + "0003612d31" + "0003312e32"
        + "00010017756e69783a2f72756e2f636f726469732f612e736f636b" + "0001000572656c6179"
    static let identityB = "000162" + "00046e6f6465" + "0003622d37" + "0003312e32"
        + "000100117463703a31302e302e302e323a37303030" + "0000"

    @Test("the transcripts, proofs and frame keys match the documented vectors")
    func documentedVectors() throws {
        #expect(Hex.string(initiatorTranscript) == Self.nonces + Self.identityA)
        #expect(Hex.string(transcript) == Self.nonces + Self.identityA + Self.identityB)
        let key = try secret(secretOne)
        #expect(Hex.string(try KeySchedule.proof(initiator: true, secret: key, transcript: initiatorTranscript))
            == "55822add099305b81864a31507be9191684b37a84c297e20971bc5c43d3bb60e")
        #expect(Hex.string(try KeySchedule.proof(initiator: false, secret: key, transcript: transcript))
            == "1012cb4aa84257716c6cfb881d24eb6f6850aaf7c83b389bccd0be639c43b91b")
        let keys = try KeySchedule.sessionKeys(secret: key, transcript: transcript, forInitiator: true)
        #expect(Hex.string(keys.sending) == "de028be883ff25c64ca95061378abecacf1fbfdd17538d2fae28cab53cf16028")
        #expect(Hex.string(keys.receiving) == "3fe9c608041a49949aa3759bc9c02e0818c25038f124b42f19523d7d5bccca8d")
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
            "55822add099305b81864a31507be9191684b37a84c297e20971bc5c43d3bb60e".utf8, count: 32))))
        let welcome = try #require(responder.receive(proof).messages.first)
        guard case .welcome(let body) = welcome else {
            Issue.record("expected a welcome")
            return
        }
        #expect(body.identity == WireFixtures.nodeB)
        #expect(body.proof.map(Hex.string) == "1012cb4aa84257716c6cfb881d24eb6f6850aaf7c83b389bccd0be639c43b91b")
        #expect(initiator.receive(welcome).result?.peer == WireFixtures.nodeB)
    }

    @Test("the first sealed frame of the initiator matches the documented bytes")
    func documentedSealedFrame() throws {
        let keys = try KeySchedule.sessionKeys(secret: secret(secretOne), transcript: transcript, forInitiator: true)
        var codec = SessionCodec(keys: keys)
        var buffer: [UInt8] = []
        try codec.append(.ping(id: 17), to: &buffer)
        let expected = #"{"seq":0,"mac":"7789d5522fae5e02bc4cb430a664b3369bb1607e33812c7713957ae3f7d6e741","type":"ping","id":17}"#
        #expect(Array(buffer.prefix(4)) == [0x00, 0x00, 0x00, 0x68])
        #expect(String(decoding: buffer.dropFirst(4), as: UTF8.self) == expected)
        let responderKeys = try KeySchedule.sessionKeys(secret: secret(secretOne), transcript: transcript, forInitiator: false)
        var responder = SessionCodec(keys: responderKeys)
        #expect(try responder.decode(Frame(payload: Array(expected.utf8))) == .ping(id: 17))
    }
}
