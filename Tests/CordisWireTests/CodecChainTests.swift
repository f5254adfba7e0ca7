import Synchronization
import Testing
@testable import CordisWire

/// The codec chain between a connection's socket and its queue, tested with bytes in and payloads or
/// bytes out: no socket, no loop.
@Suite("The codec chain")
struct CodecChainTests {
    private static func framed(_ payloads: [[UInt8]]) -> [UInt8] {
        var bytes: [UInt8] = []
        for payload in payloads { try? FrameEncoder(maxFrameSize: Int.max).append(payload: payload, to: &bytes) }
        return bytes
    }

    private static func receive(_ chain: inout CodecChain, _ bytes: [UInt8]) -> CodecChain.Step {
        bytes.withUnsafeBytes { chain.receive($0, connection: 7) }
    }

    /// The one message in `framed` bytes.
    private static func message(in framed: [UInt8]) throws -> WireMessage? {
        var decoder = FrameDecoder()
        decoder.feed(framed)
        guard let frame = try decoder.next() else { return nil }
        #expect(decoder.bufferedByteCount == 0)
        return try WireMessage(frame: frame)
    }

    private static func frames(maxFrameSize: Int = 1024) -> CodecChain {
        CodecChain(framing: .frames(FrameDecoder(maxFrameSize: maxFrameSize)), sniffsTLS: true)
    }

    @Test("splits frames whatever the reads' boundaries, and counts bytes and frames")
    func splitsAcrossReads() {
        let payloads: [[UInt8]] = [Array("{\"a\":1}".utf8), Array("{}".utf8), Array(repeating: 0x41, count: 300)]
        let bytes = Self.framed(payloads)
        for cut in [1, 3, 4, 5, 17, bytes.count] {
            var chain = Self.frames()
            var seen: [[UInt8]] = []
            var start = 0
            while start < bytes.count {
                let step = Self.receive(&chain, Array(bytes[start..<min(start + cut, bytes.count)]))
                #expect(step.end == nil)
                #expect(step.reply.isEmpty)
                seen += Array(step.payloads)
                start += cut
            }
            #expect(seen == payloads, "reads of \(cut) bytes")
            #expect(chain.payloadsReceived == 3)
            #expect(chain.bytesReceived == bytes.count)
            #expect(chain.finish(connection: 7) == nil)
        }
    }

    @Test("answers a frame over the limit with an oversize error frame, after the frames before it")
    func oversizeEndsWithAnErrorFrame() throws {
        var chain = Self.frames(maxFrameSize: 8)
        let step = Self.receive(&chain, Self.framed([Array("{}".utf8)]) + [0, 0, 0, 9])
        #expect(Array(step.payloads) == [Array("{}".utf8)])
        guard case .framing(let error, let notice)? = step.end else {
            Issue.record("no framing end: \(String(describing: step.end))")
            return
        }
        #expect(error.code == .frameTooLarge)
        #expect(error.message.hasPrefix("connection 7: frame of 9 bytes exceeds the limit of 8 bytes"))
        guard case .error(let remote)? = try Self.message(in: notice) else {
            Issue.record("the notice is not an error message")
            return
        }
        #expect(remote.id == nil)
        #expect(remote.code == "oversize")
    }

    @Test("answers a frame of length zero as a protocol violation, its code spelled for the peer's version", arguments: [
        (nil, "badLength"), ("1.4", "badLength"), ("1.5", "bad-length"),
    ] as [(String?, String)])
    func zeroLengthIsAViolation(version: String?, code: String) throws {
        var chain = Self.frames()
        chain.peerVersion = version.flatMap(ProtocolVersion.init)
        let step = Self.receive(&chain, [0, 0, 0, 0])
        guard case .framing(let error, let notice)? = step.end else {
            Issue.record("no framing end")
            return
        }
        #expect(error.code == .protocolViolation)
        guard case .error(let remote)? = try Self.message(in: notice) else {
            Issue.record("the notice is not an error message")
            return
        }
        #expect(remote.code == code)
    }

    @Test("refuses a TLS ClientHello on a plain link with a plain reject, and only where it sniffs")
    func sniffsAClientHello() throws {
        let hello: [UInt8] = [0x16, 0x03, 0x01, 0x00, 0x40] + Array(repeating: 0, count: 64)
        var plain = Self.frames()
        let step = Self.receive(&plain, hello)
        guard case .stream(let error, let lastWords)? = step.end else {
            Issue.record("no stream end")
            return
        }
        #expect(error.code == .tls)
        #expect(error.message.contains("the peer speaks TLS, and this node has no TLS configured"))
        #expect(step.payloads.isEmpty)
        guard case .reject(let rejection)? = try Self.message(in: lastWords) else {
            Issue.record("the last words are not a reject")
            return
        }
        #expect(rejection.code == "tlsNotConfigured")

        // Where the chain does not sniff (a Unix socket), the same bytes are a length, far too large.
        var unsniffed = CodecChain(framing: .frames(FrameDecoder(maxFrameSize: 1024)), sniffsTLS: false)
        guard case .framing(let framingError, _)? = Self.receive(&unsniffed, hello).end else {
            Issue.record("no framing end without sniffing")
            return
        }
        #expect(framingError.code == .frameTooLarge)

        // Only the first bytes are sniffed.
        var later = Self.frames(maxFrameSize: 1 << 30)
        #expect(Self.receive(&later, Self.framed([Array("{}".utf8)])).end == nil)
        #expect(Self.receive(&later, hello).end == nil)
    }

    /// Subtracts one from every byte on the way in and adds it on the way out; answers its first read
    /// with `ack`, fails when it reads `0xFF` (a byte a shifted frame header never holds here).
    final class ShiftFilter: StreamFilter {
        let answered = Mutex(false)

        func inbound(_ bytes: UnsafeRawBufferPointer) throws(TransportError) -> (plain: [UInt8], reply: [UInt8]) {
            if bytes.contains(0xFF) { throw TransportError(.tls, "bad record") }
            let first = answered.withLock { answered in
                defer { answered = true }
                return !answered
            }
            return (bytes.map { $0 &- 1 }, first ? Array("ack".utf8) : [])
        }

        func outbound(_ framed: [UInt8]) throws(TransportError) -> [UInt8] { framed.map { $0 &+ 1 } }

        func takeLastWords() -> [UInt8] { [0xAA, 0xBB] }
    }

    @Test("passes bytes through the stream filter both ways, its answer first, and ends with its last words")
    func streamFilter() {
        var chain = CodecChain(framing: .frames(FrameDecoder()), streamFilter: ShiftFilter(), sniffsTLS: true)
        let payload = Array("{\"x\":2}".utf8)
        let sealed = (try? chain.outbound(Self.framed([payload]))) ?? []
        #expect(sealed == Self.framed([payload]).map { $0 &+ 1 })
        let step = Self.receive(&chain, sealed)
        #expect(step.reply == Array("ack".utf8))
        #expect(Array(step.payloads) == [payload])
        #expect(Self.receive(&chain, sealed).reply.isEmpty)

        let failed = Self.receive(&chain, [0xFF])
        #expect(failed.end == .stream(TransportError(.tls, "bad record"), lastWords: [0xAA, 0xBB]))
        #expect(failed.payloads.isEmpty)
    }

    @Test("a TLS ClientHello is not sniffed once a stream filter is in place")
    func noSniffingUnderAFilter() {
        var chain = CodecChain(framing: .frames(FrameDecoder(maxFrameSize: 1 << 30)), streamFilter: ShiftFilter(), sniffsTLS: true)
        // Shifted down by the filter: the frame decoder sees 0x15 0x02 …, a large length, and waits for it.
        #expect(Self.receive(&chain, [0x16, 0x03, 0x01, 0x01]).end == nil)
    }

    @Test("raw framing hands each read on as it came, and has no frame to cut short")
    func rawFraming() {
        var chain = CodecChain(framing: .raw, sniffsTLS: false)
        #expect(chain.maxFrameSize == nil)
        chain.maxFrameSize = 4
        #expect(chain.maxFrameSize == nil)
        let first = Self.receive(&chain, [0, 0, 0, 0, 9, 9])
        #expect(Array(first.payloads) == [[0, 0, 0, 0, 9, 9]])
        #expect(first.end == nil)
        #expect(Self.receive(&chain, []).payloads.isEmpty)
        #expect(chain.payloadsReceived == 1)
        #expect(chain.finish(connection: 7) == nil)
    }

    @Test("a frame cut short by the end of the stream is the close reason, and release forgets it")
    func cutShort() {
        var chain = Self.frames()
        let bytes = Self.framed([Array("{\"long\":true}".utf8)])
        #expect(Self.receive(&chain, Array(bytes.prefix(6))).payloads.isEmpty)
        let reason = chain.finish(connection: 7)
        #expect(reason?.code == .connectionReset)
        #expect(reason?.message.hasPrefix("connection 7: ") == true)
        chain.release()
        #expect(chain.finish(connection: 7) == nil)
    }

    @Test("a raised frame limit lets a larger frame through")
    func raisedLimit() {
        var chain = Self.frames(maxFrameSize: 4)
        chain.maxFrameSize = 64
        #expect(chain.maxFrameSize == 64)
        let payload = Array(repeating: UInt8(0x20), count: 40)
        let step = Self.receive(&chain, Self.framed([payload]))
        #expect(step.end == nil)
        #expect(Array(step.payloads) == [payload])
    }
}
