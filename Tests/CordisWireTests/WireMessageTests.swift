import CordisJSON
import CordisProcessTesting
import Testing
@testable import CordisWire

@Suite("WireMessage")
struct WireMessageTests {
    @Test("every message encodes to its golden bytes", arguments: WireFixtures.all)
    func encodesToGoldenBytes(fixture: MessageFixture) {
        #expect(String(decoding: fixture.message.encoded, as: UTF8.self) == fixture.json)
    }

    @Test("every golden frame decodes to its message", arguments: WireFixtures.all)
    func decodesGoldenFrame(fixture: MessageFixture) throws {
        var decoder = FrameDecoder()
        decoder.feed(fixture.frame)
        let frame = try #require(try decoder.next())
        #expect(try WireMessage(frame: frame) == fixture.message)
        #expect(try decoder.next() == nil)
        try decoder.finish()
    }

    @Test("every message survives encode then decode", arguments: WireFixtures.all)
    func roundTrips(fixture: MessageFixture) throws {
        var buffer: [UInt8] = [0xFF]  // frames are appended after what is already there
        try FrameEncoder().append(fixture.message, to: &buffer)
        #expect(buffer[0] == 0xFF)
        #expect(Array(buffer.dropFirst()) == fixture.frame)
        var decoder = FrameDecoder()
        decoder.feed(buffer.dropFirst())
        let frame = try #require(try decoder.next())
        #expect(try WireMessage(frame: frame) == fixture.message)
    }

    @Test("the fixture stream decodes the same whole, byte by byte and in seeded random chunks")
    func decodesStreamInEveryChunking() throws {
        let stream = WireFixtures.stream
        let expected = WireFixtures.all.map(\.message)
        #expect(try decodeAll(stream, chunks: [stream.count]) == expected)
        #expect(try decodeAll(stream, chunks: Array(repeating: 1, count: stream.count)) == expected)
        for seed in UInt64(1) ... 50 {
            var generator = SeededGenerator(seed: seed)
            var chunks: [Int] = []
            var total = 0
            while total < stream.count {
                let size = min(Int.random(in: 1 ... 97, using: &generator), stream.count - total)
                chunks.append(size)
                total += size
            }
            #expect(try decodeAll(stream, chunks: chunks) == expected, "seed \(seed)")
        }
    }

    @Test("unknown members are ignored and a missing realm reads as the root realm")
    func ignoresUnknownMembers() throws {
        let json = #"{"type":"call","id":1,"service":"s","method":"m","args":{},"future":[1,2]}"#
        let message = try WireMessage(frame: Frame(payload: Array(json.utf8)))
        #expect(message == .call(RemoteCall(id: 1, service: "s", realm: nil, method: "m", args: [:])))
    }

    @Test("an unknown type decodes as unknown and gets an unknown-type error reply, spelled unknownType for a peer before 1.5")
    func unknownTypeIsDecodable() throws {
        let message = try WireMessage(frame: Frame(payload: Array(#"{"type":"relay","to":"c"}"#.utf8)))
        guard case .unknown(let type, let body) = message else {
            Issue.record("expected .unknown, got \(message)")
            return
        }
        #expect(type == "relay")
        #expect(body["to"] == "c")
        guard case .error(let reply) = WireMessage.unknownTypeReply(to: type, version: .current),
              case .error(let older) = WireMessage.unknownTypeReply(to: type, version: ProtocolVersion(major: 1, minor: 4))
        else {
            Issue.record("expected an error reply")
            return
        }
        #expect(reply.id == nil)
        #expect(reply.code == "unknown-type")
        #expect(older.code == "unknownType")
        #expect(WireError.Code(wire: older.code) == .unknownType)
    }

    func decodeAll(_ stream: [UInt8], chunks: [Int]) throws -> [WireMessage] {
        var decoder = FrameDecoder()
        var messages: [WireMessage] = []
        var position = 0
        for size in chunks {
            decoder.feed(stream[position ..< position + size])
            position += size
            while let frame = try decoder.next() { messages.append(try WireMessage(frame: frame)) }
        }
        try decoder.finish()
        return messages
    }
}
