import Testing
@testable import CordisWire

/// The test vectors of docs/wire-protocol.md, computed there independently (Python's hmac module).
@Suite("Key schedule test vectors")
struct KeyScheduleTests {
    let transcript = KeySchedule.transcript(
        initiator: WireFixtures.nodeA, initiatorNonce: WireFixtures.nonceA,
        responder: WireFixtures.nodeB, responderNonce: WireFixtures.nonceB)

    @Test("the transcript, proofs and frame keys match the documented vectors")
    func documentedVectors() throws {
        #expect(Hex.string(transcript) == "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"
            + "202122232425262728292a2b2c2d2e2f303132333435363738393a3b3c3d3e3f"
            + "00016100016200046e6f646500046e6f64650003612d310003622d37"
            + "0003312e300003312e30"
            + "00010017756e69783a2f72756e2f636f726469732f612e736f636b"
            + "000100117463703a31302e302e302e323a37303030"
            + "0001000572656c6179" + "0000")
        let key = try secret(secretOne)
        #expect(Hex.string(try KeySchedule.proof(initiator: true, secret: key, transcript: transcript))
            == "64afed1b5ec09c864ba52c2da19730bd20318e478bae7cf4bafc31f065d7245c")
        #expect(Hex.string(try KeySchedule.proof(initiator: false, secret: key, transcript: transcript))
            == "cc5c70af00428537342a8dac33e3b42a674e15e30eea9deaaaaef5ff8ec4a194")
        let keys = try KeySchedule.sessionKeys(secret: key, transcript: transcript, forInitiator: true)
        #expect(Hex.string(keys.sending) == "0b06e49f365b77f4cb7e1d8f8544c7cd8f2a304211ef28282056d31a823b8a1f")
        #expect(Hex.string(keys.receiving) == "4ad89a0ecfcdcbc5f547e37306094ce9caf8455fae7372c615a48874d1885afe")
    }

    @Test("the first sealed frame of the initiator matches the documented bytes")
    func documentedSealedFrame() throws {
        let keys = try KeySchedule.sessionKeys(secret: secret(secretOne), transcript: transcript, forInitiator: true)
        var codec = SessionCodec(keys: keys)
        var buffer: [UInt8] = []
        try codec.append(.ping(id: 17), to: &buffer)
        let expected = #"{"seq":0,"mac":"f86220d1642e9dea8ee52974fd3687db31840a395c42b2f26db6ef338bc944ce","type":"ping","id":17}"#
        #expect(Array(buffer.prefix(4)) == [0x00, 0x00, 0x00, 0x68])
        #expect(String(decoding: buffer.dropFirst(4), as: UTF8.self) == expected)
        let responderKeys = try KeySchedule.sessionKeys(secret: secret(secretOne), transcript: transcript, forInitiator: false)
        var responder = SessionCodec(keys: responderKeys)
        #expect(try responder.decode(Frame(payload: Array(expected.utf8))) == .ping(id: 17))
    }
}
