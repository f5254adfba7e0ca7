import CordisProcessTesting
import Testing
import CordisWire
@testable import CordisNode

/// The metrics endpoint's request reader: whole heads served, partial ones waited for, anything else
/// refused with a 4xx, whatever the bytes and however they are cut.
@Suite("Metrics: the HTTP request reader")
struct MetricsRequestTests {
    static let valid = Array("GET /metrics?x=1 HTTP/1.1\r\nHost: 127.0.0.1:9100\r\nUser-Agent: Prometheus/2.42.0\r\nAccept: text/plain;version=0.0.4\r\n\r\n".utf8)

    @Test("a whole head is a request; every shorter prefix needs more")
    func wholeHeadAndPrefixes() {
        let headers = [("host", "127.0.0.1:9100"), ("user-agent", "Prometheus/2.42.0"), ("accept", "text/plain;version=0.0.4")]
            .map { HTTPRequest.Header(name: $0.0, value: $0.1) }
        #expect(HTTPRequest.parse(Self.valid) == .request(HTTPRequest(method: "GET", target: "/metrics?x=1", headers: headers)))
        #expect(HTTPRequest(method: "GET", target: "/metrics?x=1").path == "/metrics")
        for end in 0..<Self.valid.count {
            #expect(HTTPRequest.parse(Array(Self.valid[..<end])) == .needMore, "prefix of \(end) bytes")
        }
        #expect(HTTPRequest.parse(Array("GET / HTTP/1.0\n\n".utf8)) == .request(HTTPRequest(method: "GET", target: "/")))
    }

    @Test("malformed, oversized and body-carrying heads are refused with their status", arguments: [
        ("GET /metrics\r\n\r\n", 400), ("get /metrics HTTP/1.1\r\n\r\n", 400), ("GET metrics HTTP/1.1\r\n\r\n", 400),
        ("GET  /metrics HTTP/1.1\r\n\r\n", 400), ("GET /metrics HTTP/2.0\r\n\r\n", 505),
        ("GET /metrics HTTP/1.1\r\nno colon here\r\n\r\n", 400), ("GET /metrics HTTP/1.1\r\n: empty\r\n\r\n", 400),
        ("GET /metrics HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello", 413),
        ("GET /metrics HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n", 413),
        ("GET /met\u{1}rics HTTP/1.1\r\n\r\n", 400), ("GET /métrics HTTP/1.1\r\n\r\n", 400), ("\u{0}", 400),
    ])
    func refusals(text: String, status: Int) {
        guard case .refused(let refused, let reason) = HTTPRequest.parse(Array(text.utf8)) else {
            Issue.record("\(text.debugDescription) was not refused")
            return
        }
        #expect(refused == status, "\(text.debugDescription): \(reason)")
    }

    @Test("a head past 8 KiB is refused with 431, whole or not")
    func oversized() {
        let long = Array("GET /metrics HTTP/1.1\r\nX-Fill: ".utf8) + Array(repeating: UInt8(ascii: "a"), count: 9000)
        guard case .refused(431, _) = HTTPRequest.parse(long) else {
            Issue.record("an unfinished 9 KB head was not refused with 431")
            return
        }
        guard case .refused(431, _) = HTTPRequest.parse(long + Array("\r\n\r\n".utf8)) else {
            Issue.record("a whole 9 KB head was not refused with 431")
            return
        }
        let lines = Array("GET /metrics HTTP/1.1\r\n".utf8) + Array(repeating: Array("A: b\r\n".utf8), count: 65).flatMap { $0 } + Array("\r\n".utf8)
        guard case .refused(431, _) = HTTPRequest.parse(lines) else {
            Issue.record("65 header lines were not refused with 431")
            return
        }
    }

    @Test("random bytes and mutated requests never crash: a request, a wait or a 4xx/505, and never a request without a blank line", arguments: [1, 2, 3, 4])
    func fuzz(seed: UInt64) {
        var generator = SeededGenerator(seed: seed)
        for round in 0..<3000 {
            var bytes: [UInt8]
            switch round % 3 {
            case 0:
                bytes = (0..<Int.random(in: 0...200, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) }
            case 1:
                bytes = Self.valid
                for _ in 0..<Int.random(in: 1...6, using: &generator) where !bytes.isEmpty {
                    let index = Int.random(in: 0..<bytes.count, using: &generator)
                    switch Int.random(in: 0..<3, using: &generator) {
                    case 0: bytes[index] = UInt8.random(in: 0...255, using: &generator)
                    case 1: bytes.remove(at: index)
                    default: bytes.insert(UInt8.random(in: 0...255, using: &generator), at: index)
                    }
                }
            default:
                let alphabet = Array("GET /metrics HTTP/1.1\r\n: \t?".utf8)
                bytes = (0..<Int.random(in: 0...400, using: &generator)).map { _ in alphabet.randomElement(using: &generator) ?? 0 }
            }
            switch HTTPRequest.parse(bytes) {
            case .needMore:
                #expect(bytes.count <= HTTPRequest.maxHeadBytes)
            case .request(let head):
                #expect(head.target.hasPrefix("/"))
                let blank = bytes.indices.contains { index in
                    bytes[index] == 0x0A && (bytes.dropFirst(index + 1).first == 0x0A
                        || (bytes.dropFirst(index + 1).first == 0x0D && bytes.dropFirst(index + 2).first == 0x0A))
                }
                #expect(blank, "round \(round): a request without a blank line")
            case .refused(let status, let reason):
                #expect([400, 413, 431, 505].contains(status), "round \(round): \(status) \(reason)")
            }
        }
    }
}
