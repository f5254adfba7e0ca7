import Testing
@testable import CordisWire

@Suite("FrameDecoder")
struct FrameDecoderTests {
    @Test("a length over the limit is refused as soon as its four bytes arrive")
    func refusesOversizeAtTheLengthPrefix() throws {
        var decoder = FrameDecoder(maxFrameSize: 100)
        decoder.feed([0, 0, 0])
        #expect(try decoder.next() == nil)
        decoder.feed([101])
        #expect(decoder.bufferedByteCount == 4)
        let error = #expect(throws: WireError.self) { try decoder.next() }
        #expect(error?.code == .oversize)
        #expect(error?.offset == 0)
        // The decoder is spent: the same error again, even with more bytes.
        decoder.feed([1, 2, 3])
        #expect(throws: WireError.self) { try decoder.next() }
    }

    @Test("the default limit is 4 MiB: exactly 4 MiB passes, one byte more is refused before allocating")
    func defaultLimitIsFourMebibytes() throws {
        var decoder = FrameDecoder()
        decoder.feed([0x00, 0x40, 0x00, 0x00])
        #expect(try decoder.next() == nil)  // exactly 4 MiB: waits for the payload
        var refusing = FrameDecoder()
        refusing.feed([0x00, 0x40, 0x00, 0x01])
        let error = #expect(throws: WireError.self) { try refusing.next() }
        #expect(error?.code == .oversize)
        var huge = FrameDecoder()
        huge.feed([0xFF, 0xFF, 0xFF, 0xFF])
        #expect((#expect(throws: WireError.self) { try huge.next() })?.code == .oversize)
    }

    @Test("a zero length is a bad length, with the stream offset of the frame")
    func refusesZeroLength() throws {
        var decoder = FrameDecoder()
        let ping = WireFixtures.all[6].frame
        decoder.feed(ping + [0, 0, 0, 0])
        #expect(try decoder.next() != nil)
        let error = #expect(throws: WireError.self) { try decoder.next() }
        #expect(error?.code == .badLength)
        #expect(error?.offset == ping.count)
    }

    @Test("a stream cut at every offset inside a frame reports truncated at finish")
    func reportsTruncationAtEveryOffset() throws {
        for fixture in WireFixtures.all {
            let frame = fixture.frame
            for cut in 1 ..< frame.count {
                var decoder = FrameDecoder()
                decoder.feed(frame[0 ..< cut])
                #expect(try decoder.next() == nil)
                let error = #expect(throws: WireError.self) { try decoder.finish() }
                #expect(error?.code == .truncated, "\(fixture.name) cut at \(cut)")
                #expect(error?.offset == 0)
            }
            var whole = FrameDecoder()
            whole.feed(frame)
            #expect(try whole.next() != nil)
            try whole.finish()
        }
    }

    @Test("truncation after complete frames names the offset of the unfinished one")
    func truncationOffsetFollowsCompleteFrames() throws {
        let stream = WireFixtures.stream
        var decoder = FrameDecoder()
        decoder.feed(stream + [0, 0, 0, 9, 0x7B])
        var count = 0
        while try decoder.next() != nil { count += 1 }
        #expect(count == WireFixtures.all.count)
        #expect(decoder.streamOffset == stream.count)
        let error = #expect(throws: WireError.self) { try decoder.finish() }
        #expect(error?.offset == stream.count)
    }

    @Test("frames keep their stream offsets across many feeds and buffer compaction")
    func keepsOffsetsAcrossCompaction() throws {
        var decoder = FrameDecoder()
        let frame = WireFixtures.all[12].frame  // call
        var expectedOffset = 0
        for round in 0 ..< 2000 {
            decoder.feed(frame[0 ..< 3])
            decoder.feed(frame[3...])
            let decoded = try #require(try decoder.next(), "round \(round)")
            #expect(decoded.offset == expectedOffset)
            expectedOffset += frame.count
        }
        #expect(decoder.bufferedByteCount == 0)
    }

    @Test("the limit can be raised between frames, as a link does after its handshake")
    func limitCanChange() throws {
        var decoder = FrameDecoder(maxFrameSize: Handshake.maxFrameSize)
        var encoder = FrameEncoder(maxFrameSize: 1 << 20)
        var buffer: [UInt8] = []
        let big = WireMessage.result(RemoteResult(id: 1, value: .string(String(repeating: "x", count: 100_000))))
        try encoder.append(big, to: &buffer)
        decoder.maxFrameSize = 1 << 20
        decoder.feed(buffer)
        let frame = try #require(try decoder.next())
        #expect(try WireMessage(frame: frame) == big)
        encoder.maxFrameSize = 1000
        var small: [UInt8] = [1, 2]
        let error = #expect(throws: WireError.self) { try encoder.append(big, to: &small) }
        #expect(error?.code == .oversize)
        #expect(small == [1, 2])
    }
}
