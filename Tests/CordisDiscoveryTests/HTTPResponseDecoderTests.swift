@testable import CordisDiscovery
import Testing

@Suite("HTTP response decoding")
struct HTTPResponseDecoderTests {
    static let chunked = Array(
        ("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
            + "6\r\n{\"a\":1\r\n3\r\n}\n\n\r\n0\r\n\r\n").utf8)
    static let fixed = Array("HTTP/1.1 404 Not Found\r\nContent-Length: 5\r\n\r\nhello".utf8)

    /// Feeds `bytes` in pieces of the given sizes (cycled); returns the status, the body and whether it ended.
    static func decode(_ bytes: [UInt8], pieces: [Int], maxBody: Int = 1 << 20) throws -> (Int, [UInt8], Bool) {
        var decoder = HTTPResponseDecoder(maxBodyBytes: maxBody)
        var status = 0
        var body: [UInt8] = []
        var ended = false
        var offset = 0
        var piece = 0
        while offset < bytes.count {
            let size = max(1, pieces[piece % pieces.count])
            piece += 1
            decoder.feed(Array(bytes[offset..<min(bytes.count, offset + size)]))
            offset += size
            while let part = try decoder.next() {
                switch part {
                case .head(let head): status = head.status
                case .body(let bytes): body += bytes
                case .end: ended = true
                }
            }
        }
        return (status, body, ended || decoder.isComplete)
    }

    @Test("A chunked body reads the same byte by byte, whole, and in random pieces")
    func chunkedInEveryPiecing() throws {
        var generator = SystemRandomNumberGenerator()
        let random = (0..<40).map { _ in Int.random(in: 1...9, using: &generator) }
        for pieces in [[1], [Self.chunked.count], random] {
            let (status, body, ended) = try Self.decode(Self.chunked, pieces: pieces)
            #expect(status == 200)
            #expect(String(decoding: body, as: UTF8.self) == "{\"a\":1}\n\n")
            #expect(ended)
        }
    }

    @Test("A Content-Length body ends after its bytes")
    func fixedLength() throws {
        let (status, body, ended) = try Self.decode(Self.fixed, pieces: [2])
        #expect(status == 404)
        #expect(body == Array("hello".utf8))
        #expect(ended)
    }

    @Test("A body over the limit is refused, whether announced or chunked")
    func bodyLimit() {
        #expect(throws: HTTPResponseDecoder.Failure.self) { try Self.decode(Self.fixed, pieces: [100], maxBody: 4) }
        #expect(throws: HTTPResponseDecoder.Failure.self) { try Self.decode(Self.chunked, pieces: [100], maxBody: 8) }
    }

    @Test("A head without end past 16 KiB, an invalid status line and a bad chunk size are refused")
    func malformedHeads() {
        let endless = Array(("HTTP/1.1 200 OK\r\n" + String(repeating: "X-A: b\r\n", count: 3000)).utf8)
        #expect(throws: HTTPResponseDecoder.Failure.self) { try Self.decode(endless, pieces: [4096]) }
        #expect(throws: HTTPResponseDecoder.Failure.self) { try Self.decode(Array("SMTP 220 hi\r\n\r\n".utf8), pieces: [64]) }
        let badChunk = Array("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n".utf8)
        #expect(throws: HTTPResponseDecoder.Failure.self) { try Self.decode(badChunk, pieces: [64]) }
        let hugeChunk = Array("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nffffffffffffffffffff\r\n".utf8)
        #expect(throws: HTTPResponseDecoder.Failure.self) { try Self.decode(hugeChunk, pieces: [64]) }
    }

    @Test("A connection that closes in the middle of a chunked body is an error; a body until close ends there")
    func endOfConnection() throws {
        var decoder = HTTPResponseDecoder(maxBodyBytes: 1024)
        decoder.feed(Array(Self.chunked.prefix(90)))
        while try decoder.next() != nil {}
        #expect(throws: HTTPResponseDecoder.Failure.self) { try decoder.finish() }
        var untilClose = HTTPResponseDecoder(maxBodyBytes: 1024)
        untilClose.feed(Array("HTTP/1.1 200 OK\r\n\r\nabc".utf8))
        while try untilClose.next() != nil {}
        #expect(try untilClose.finish() == .end)
    }

    @Test("Lines split across pieces come out whole; a line over the limit is refused")
    func lines() throws {
        var splitter = LineSplitter(maxLineBytes: 8)
        #expect(try splitter.feed(Array("ab".utf8)).isEmpty)
        #expect(try splitter.feed(Array("c\r\nd\n\ne".utf8)) == [Array("abc".utf8), Array("d".utf8)])
        #expect(throws: LineSplitter.Overflow.self) { try splitter.feed(Array("123456789".utf8)) }
    }

    @Test("Discovery settings: etcd:URL lists, IPv6, and what is refused")
    func endpoints() throws {
        let list = try EtcdEndpoint.list(parsing: "etcd:http://127.0.0.1:2379,http://[::1]:2380/")
        #expect(list == [EtcdEndpoint(host: "127.0.0.1", port: 2379), EtcdEndpoint(host: "::1", port: 2380)])
        for bad in ["zk:http://a:1", "etcd:", "etcd:https://a:1", "etcd:http://a", "etcd:http://a:0", "etcd:http://a:99999"] {
            #expect(throws: EtcdError.self) { try EtcdEndpoint.list(parsing: bad) }
        }
    }

    @Test("Backoff doubles up to its maximum, with jitter between half and all of each step")
    func backoff() {
        var backoff = ReconnectBackoff(first: .milliseconds(100), maximum: .milliseconds(400))
        #expect(backoff.next(random: 1) == .milliseconds(100))
        #expect(backoff.next(random: 0) == .milliseconds(100))
        #expect(backoff.next(random: 1) == .milliseconds(400))
        #expect(backoff.next(random: .nan) == .milliseconds(400))
        backoff.reset()
        #expect(backoff.next(random: 1) == .milliseconds(100))
    }

    @Test("Random bytes, and valid responses with random bytes flipped, end in parts or a failure, never a crash or more body than the limit")
    func randomInput() {
        var generator = SystemRandomNumberGenerator()
        for round in 0..<2_000 {
            var bytes: [UInt8]
            if round % 2 == 0 {
                bytes = (0..<Int.random(in: 0...300, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) }
            } else {
                bytes = Self.chunked
                for _ in 0..<3 { bytes[Int.random(in: 0..<bytes.count, using: &generator)] = UInt8.random(in: 0...255, using: &generator) }
            }
            var decoder = HTTPResponseDecoder(maxBodyBytes: 64)
            var body = 0
            decoder.feed(bytes)
            do {
                while let part = try decoder.next() {
                    if case .body(let piece) = part { body += piece.count }
                }
                _ = try decoder.finish()
            } catch {}
            #expect(body <= 64)
        }
    }

    @Test("Watch lines that are not what etcd sends are refused with an error, never a crash")
    func malformedWatchLines() throws {
        let endpoint = EtcdEndpoint(host: "127.0.0.1", port: 1)
        for line in [
            "not json", "[]", #"{"result": 1}"#, #"{"result": {"header": {"revision": "x"}}}"#,
            #"{"result": {"header": {"revision": "1"}, "events": [{"kv": {"key": "%%%"}}]}}"#,
            #"{"result": {"header": {"revision": "1"}, "events": [{"kv": 5}]}}"#,
            #"{"result": {"header": {"revision": "99999999999999999999999"}}}"#,
            // The next revision to watch from must exist: the largest and negative ones are refused.
            #"{"result": {"header": {"revision": "9223372036854775807"}}}"#,
            #"{"result": {"header": {"revision": "-1"}}}"#,
        ] {
            #expect(throws: EtcdError.self, "\(line)") { try EtcdWatch.decode(Array(line.utf8), from: endpoint) }
        }
        let progress = #"{"result": {"header": {"revision": "7"}}}"#
        #expect(try EtcdWatch.decode(Array(progress.utf8), from: endpoint) == nil)
    }
}
