import Testing
@testable import CordisWire

@Suite("SessionCodec")
struct SessionCodecTests {
    /// Codecs for both ends of an authenticated link.
    func authenticatedPair() throws -> (initiator: SessionCodec, responder: SessionCodec) {
        var run = try HandshakeRun(
            initiator: configuration(WireFixtures.nodeA, secrets: [secretOne]),
            responder: configuration(WireFixtures.nodeB, secrets: [secretOne]))
        run.run()
        let initiator = try #require(run.initiatorOutcome?.result)
        let responder = try #require(run.responderOutcome?.result)
        return (initiator.sessionCodec(), responder.sessionCodec())
    }

    func frames(_ bytes: [UInt8]) throws -> [Frame] {
        var decoder = FrameDecoder()
        decoder.feed(bytes)
        var frames: [Frame] = []
        while let frame = try decoder.next() { frames.append(frame) }
        try decoder.finish()
        return frames
    }

    @Test("a shared event's copies are byte for byte the event encoded per subscription, sealed or plain")
    func sharedEvent() throws {
        let event = ControlEvent(
            id: 0, node: "n\u{e9}-1", time: 1_700_000_000.25, kind: "status",
            detail: ["fiber": 7, "to": "active", "error": "a \"quoted\"\nline", "nested": ["a": [1, 2]]])
        let shared = SharedEvent(event)
        for authenticated in [true, false] {
            var viaShared = authenticated ? try authenticatedPair().initiator : SessionCodec(keys: nil)
            var viaMessage = viaShared
            var bufferShared: [UInt8] = []
            var bufferMessage: [UInt8] = []
            for id in [0, 1, 9, 10, 12_345, -3, Int.max] {
                try viaShared.append(shared, id: id, to: &bufferShared)
                var copy = event
                copy.id = id
                try viaMessage.append(.event(copy), to: &bufferMessage)
            }
            #expect(bufferShared == bufferMessage, "authenticated: \(authenticated)")
        }
    }

    @Test("every fixture message crosses an authenticated link in both directions")
    func roundTrip() throws {
        var (initiator, responder) = try authenticatedPair()
        #expect(initiator.isAuthenticated)
        var buffer: [UInt8] = []
        for fixture in WireFixtures.all { try initiator.append(fixture.message, to: &buffer) }
        let sent = try frames(buffer)
        #expect(try sent.map { try responder.decode($0) } == WireFixtures.all.map(\.message))
        buffer = []
        for fixture in WireFixtures.all { try responder.append(fixture.message, to: &buffer) }
        #expect(try frames(buffer).map { try initiator.decode($0) } == WireFixtures.all.map(\.message))
        // A MACed frame is still one JSON object with its type.
        let text = String(decoding: sent[6].payload, as: UTF8.self)
        #expect(text.hasPrefix(#"{"seq":6,"mac":""#))
        #expect(text.hasSuffix(#"","type":"ping","id":17}"#))
    }

    /// A frame sealed here by hand with the initiator's sending key: `{"seq":N,"mac":"…",` then `members`
    /// (the message's members after its opening brace).
    func handSealed(_ members: String, sequence: Int, keys: SessionKeys) throws -> Frame {
        var payload = Array(#"{"seq":\#(sequence),"mac":""#.utf8)
        let macStart = payload.count
        payload += Array(repeating: UInt8(ascii: "0"), count: 64) + Array("\",".utf8) + Array(members.utf8)
        var mac = [UInt8](repeating: 0, count: HMACSHA256.size)
        let key = HMACSHA256.Key(keys.sending)
        try payload.withUnsafeBytes { bytes in try mac.withUnsafeMutableBytes { try key.mac(bytes, into: $0) } }
        payload.replaceSubrange(macStart ..< macStart + 64, with: Array(Hex.string(mac).utf8))
        return Frame(payload: payload)
    }

    @Test("a sealed call or result in another form than this side writes decodes as the general decoder reads it, and a bad one names its error")
    func sealedMessageInAnotherForm() throws {
        let transcript = KeySchedule.transcript(
            initiator: WireFixtures.nodeA, initiatorNonce: WireFixtures.nonceA,
            responder: WireFixtures.nodeB, responderNonce: WireFixtures.nonceB)
        let keys = try KeySchedule.sessionKeys(secret: secret(secretOne), transcript: transcript, forInitiator: true)
        var responder = SessionCodec(
            keys: try KeySchedule.sessionKeys(secret: secret(secretOne), transcript: transcript, forInitiator: false))
        // Spaces, and the members in another order: not the direct decoder's form.
        let call = try handSealed(
            #""method": "now", "type": "call", "args": {}, "id": 3, "service": "clock"}"#, sequence: 0, keys: keys)
        #expect(try responder.decode(call) == .call(RemoteCall(id: 3, service: "clock", realm: nil, method: "now", args: [:])))
        let result = try handSealed(#""id":4,"type":"result","value":[1, 2]}"#, sequence: 1, keys: keys)
        #expect(try responder.decode(result) == .result(RemoteResult(id: 4, value: [1, 2])))
        // The direct form, read in place.
        let direct = try handSealed(#""type":"result","id":5,"value":{"node":"b"}}"#, sequence: 2, keys: keys)
        #expect(try responder.decode(direct) == .result(RemoteResult(id: 5, value: ["node": "b"])))
        // A MAC that verifies over members that are not JSON: the general decoder's error, at the frame's offset.
        let broken = try handSealed(#""type":"result","id":6,"value":}"#, sequence: 3, keys: keys)
        let error = #expect(throws: WireError.self) { try responder.decode(broken) }
        #expect(error?.code == .malformedJSON)
    }

    @Test("a tampered frame is badMAC, whichever byte changed")
    func tamperedFrame() throws {
        var (initiator, responder) = try authenticatedPair()
        var buffer: [UInt8] = []
        try initiator.append(.call(RemoteCall(id: 9, service: "counter", realm: nil, method: "add", args: ["_0": 1])), to: &buffer)
        let frame = try #require(try frames(buffer).first)
        for index in frame.payload.indices {
            var copy = responder
            var tampered = frame
            tampered.payload[index] ^= 0x01
            let error = #expect(throws: WireError.self) { try copy.decode(tampered) }
            #expect(error?.code == .badMAC, "byte \(index)")
        }
        #expect(try responder.decode(frame) == .call(RemoteCall(id: 9, service: "counter", realm: nil, method: "add", args: ["_0": 1])))
    }

    @Test("a replayed or reordered frame is replay, and a frame without a MAC is badMAC")
    func replayedFrame() throws {
        var (initiator, responder) = try authenticatedPair()
        var buffer: [UInt8] = []
        try initiator.append(.ping(id: 1), to: &buffer)
        try initiator.append(.ping(id: 2), to: &buffer)
        let sent = try frames(buffer)
        var reordered = responder
        #expect((#expect(throws: WireError.self) { try reordered.decode(sent[1]) })?.code == .replay)
        #expect(try responder.decode(sent[0]) == .ping(id: 1))
        var replayed = responder
        #expect((#expect(throws: WireError.self) { try replayed.decode(sent[0]) })?.code == .replay)
        #expect(try responder.decode(sent[1]) == .ping(id: 2))
        let plain = Frame(payload: WireMessage.ping(id: 3).encoded)
        #expect((#expect(throws: WireError.self) { try responder.decode(plain) })?.code == .badMAC)
    }

    @Test("a frame reflected back to its sender does not verify")
    func reflectedFrame() throws {
        var (initiator, _) = try authenticatedPair()
        var buffer: [UInt8] = []
        try initiator.append(.ping(id: 1), to: &buffer)
        let frame = try #require(try frames(buffer).first)
        #expect((#expect(throws: WireError.self) { try initiator.decode(frame) })?.code == .badMAC)
    }

    @Test("frames of another link with the same secret do not verify")
    func otherLinkFrame() throws {
        var (first, _) = try authenticatedPair()
        var (_, second) = try authenticatedPair()
        var buffer: [UInt8] = []
        try first.append(.ping(id: 1), to: &buffer)
        let frame = try #require(try frames(buffer).first)
        #expect((#expect(throws: WireError.self) { try second.decode(frame) })?.code == .badMAC)
    }

    @Test("an unauthenticated session codec writes plain frames")
    func plainSession() throws {
        var codec = SessionCodec(keys: nil)
        var buffer: [UInt8] = []
        try codec.append(.ping(id: 17), to: &buffer)
        #expect(buffer == WireFixtures.all[6].frame)
        #expect(try codec.decode(Frame(payload: Array(buffer.dropFirst(4)))) == .ping(id: 17))
    }
}
