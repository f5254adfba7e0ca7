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
            + "00016100016200046e6f646500046e6f64650003612d310003622d37")
        let key = try secret(secretOne)
        #expect(Hex.string(try KeySchedule.proof(initiator: true, secret: key, transcript: transcript))
            == "8ee38006c7f8c7cc8794bf6a6c085c0272fc5753a2fc828e7c3c76266effdf21")
        #expect(Hex.string(try KeySchedule.proof(initiator: false, secret: key, transcript: transcript))
            == "946a91ff6688fddb591b97020b83dd128766b6d2a14699e6ddb668cd80220322")
        let keys = try KeySchedule.sessionKeys(secret: key, transcript: transcript, forInitiator: true)
        #expect(Hex.string(keys.sending) == "e08a5792a3618382eea1578de3a458e9c86a5f46c9730587d1c8551a0c3b1b8d")
        #expect(Hex.string(keys.receiving) == "73d9829cfd730f8961b14928b7d2c8859ea60febf1e24e93297c7e8c839a8eb3")
    }

    @Test("the first sealed frame of the initiator matches the documented bytes")
    func documentedSealedFrame() throws {
        let keys = try KeySchedule.sessionKeys(secret: secret(secretOne), transcript: transcript, forInitiator: true)
        var codec = SessionCodec(keys: keys)
        var buffer: [UInt8] = []
        try codec.append(.ping(id: 17), to: &buffer)
        let expected = #"{"seq":0,"mac":"943c4aa69c73352db0e85b7fd3f533b2d41fa73b1e908997379ca3840d7c18cc","type":"ping","id":17}"#
        #expect(Array(buffer.prefix(4)) == [0x00, 0x00, 0x00, 0x68])
        #expect(String(decoding: buffer.dropFirst(4), as: UTF8.self) == expected)
        let responderKeys = try KeySchedule.sessionKeys(secret: secret(secretOne), transcript: transcript, forInitiator: false)
        var responder = SessionCodec(keys: responderKeys)
        #expect(try responder.decode(Frame(payload: Array(expected.utf8))) == .ping(id: 17))
    }
}
