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
