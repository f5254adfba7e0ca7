import CordisJSON
import CordisProcessTesting
import CordisWire
import Testing
@testable import CordisConsole

/// The web console's routes with good and bad requests, and the whole request path (parser, access,
/// routes) fed random and mutated bytes as the frame decoder is.
@Suite("Web console: routes and the request parser")
struct WebRouteTests {
    static let token = WebAccessTests.token
    static let access = WebAccessTests.access

    static func bytes(_ method: String, _ target: String, type: String? = "application/json", body: String = "") -> [UInt8] {
        var head = "\(method) \(target) HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nCookie: cordis_console=\(token.text)\r\nOrigin: http://127.0.0.1:8080\r\n"
        if let type { head += "Content-Type: \(type)\r\n" }
        if !body.isEmpty { head += "Content-Length: \(body.utf8.count)\r\n" }
        return Array((head + "\r\n" + body).utf8)
    }

    /// The status of an answer's first line.
    static func status(_ decision: WebConsole.Decision) -> Int? {
        guard case .answer(let bytes) = decision else { return nil }
        let line = String(decoding: bytes.prefix(while: { $0 != 0x0D }), as: UTF8.self)
        return Int(line.split(separator: " ").dropFirst().first ?? "")
    }

    @Test("every page path serves the page; the assets and the stream have their routes")
    func pagesAndAssets() {
        for path in WebRoute.pages.sorted() {
            #expect(Self.status(WebConsole.decide(Self.bytes("GET", path), access: Self.access)) == 200, "\(path)")
        }
        #expect(Self.status(WebConsole.decide(Self.bytes("GET", "/app.js"), access: Self.access)) == 200)
        #expect(WebConsole.decide(Self.bytes("GET", "/events"), access: Self.access) == .serve(.events, extra: []))
        #expect(WebConsole.decide(Self.bytes("GET", "/graph.svg"), access: Self.access) == .serve(.graph, extra: []))
        // The token in the URL: a redirect that sets the cookie and drops the token from the address.
        guard case .answer(let bytes) = WebConsole.decide(Self.bytes("GET", "/plugins?token=\(Self.token.text)"), access: Self.access) else {
            Issue.record("the token URL was not answered")
            return
        }
        let text = String(decoding: bytes, as: UTF8.self)
        #expect(text.hasPrefix("HTTP/1.1 302 "))
        #expect(text.contains("\r\nLocation: /plugins\r\n"))
        #expect(text.contains("Set-Cookie: cordis_console=\(Self.token.text); HttpOnly; SameSite=Strict; Path=/"))
    }

    @Test("a good action is routed with its command, node and arguments")
    func goodAction() {
        let decision = WebConsole.decide(
            Self.bytes("POST", "/api/action", body: #"{"command":"disable","node":"a","args":{"entry":"clock"}}"#), access: Self.access)
        #expect(decision == .serve(.action(WebAction(command: .disable, node: "a", args: ["entry": "clock"])), extra: []))
    }

    @Test("bad requests get their 4xx", arguments: [
        ("GET", "/api/action", "application/json", "", 405),
        ("POST", "/cluster", "application/json", "{}", 405),
        ("DELETE", "/events", "application/json", "", 405),
        ("GET", "/etc/passwd", "application/json", "", 404),
        ("GET", "/../app.js", "application/json", "", 404),
        ("POST", "/api/action", "text/plain", #"{"command":"enable"}"#, 415),
        ("POST", "/api/action", "application/json", "{not json", 400),
        ("POST", "/api/action", "application/json", "[1]", 400),
        ("POST", "/api/action", "application/json", #"{"command":"forget","args":{"member":"not a name!"}}"#, 400),
        ("POST", "/api/action", "application/json", #"{"command":"forget","args":{}}"#, 400),
        ("POST", "/api/action", "application/json", #"{"command":"apply","args":{}}"#, 400),
        ("POST", "/api/action", "application/json", #"{"command":"apply"}"#, 400),
        ("POST", "/api/action", "application/json", #"{"command":"enable","node":"a b","args":{"entry":"x"}}"#, 400),
        ("POST", "/api/action", "application/json", #"{"command":"enable","node":"a"}"#, 400),
        ("POST", "/api/action", "application/json", #"{"command":"enable","args":{"entry":"x"}}"#, 400),
        ("POST", "/api/action", "application/json", #"{"command":"config","node":"a","args":[]}"#, 400),
        ("POST", "/api/action", "application/json", #"{"command":"call","args":{"service":"counter"}}"#, 400),
        ("POST", "/api/action", "application/json", #"{"command":"add","args":{"entry":{}}}"#, 400),
    ])
    func badRequests(method: String, target: String, type: String, body: String, status: Int) {
        #expect(Self.status(WebConsole.decide(Self.bytes(method, target, type: type, body: body), access: Self.access)) == status)
    }

    @Test("a body is read to its Content-Length; a longer one, a bad length or chunked is refused")
    func bodies() {
        let whole = Self.bytes("POST", "/api/action", body: #"{"command":"call","args":{"service":"counter","method":"value"}}"#)
        #expect(WebConsole.decide(Array(whole.dropLast()), access: Self.access) == .needMore)
        guard case .serve(.action, _) = WebConsole.decide(whole, access: Self.access) else {
            Issue.record("the whole body was not read")
            return
        }
        let big = String(repeating: " ", count: WebConsole.maxBodyBytes + 1)
        #expect(Self.status(WebConsole.decide(Self.bytes("POST", "/api/action", body: big), access: Self.access)) == 413)
        let head = "POST /api/action HTTP/1.1\r\nHost: 127.0.0.1:8080\r\n"
        for line in ["Content-Length: 1x", "Content-Length: -1", "Content-Length: 99999999999999", "Content-Length: 2\r\nContent-Length: 3"] {
            #expect(Self.status(WebConsole.decide(Array((head + line + "\r\n\r\n").utf8), access: Self.access)) == 400, "\(line)")
        }
        #expect(Self.status(WebConsole.decide(Array((head + "Transfer-Encoding: chunked\r\n\r\n").utf8), access: Self.access)) == 413)
    }

    @Test("random bytes and mutated requests never crash: a wait, a 4xx/505 answer, or a served route", arguments: [1, 2, 3, 4])
    func fuzz(seed: UInt64) {
        var generator = SeededGenerator(seed: seed)
        let seeds = [
            Self.bytes("GET", "/plugins"), Self.bytes("GET", "/?token=\(Self.token.text)"),
            Self.bytes("POST", "/api/action", body: #"{"command":"config","node":"a","args":{"entry":"c","config":{"start":1}}}"#),
        ]
        for round in 0..<3000 {
            var bytes: [UInt8]
            switch round % 3 {
            case 0:
                bytes = (0..<Int.random(in: 0...300, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) }
            case 1:
                bytes = seeds[round % seeds.count]
                for _ in 0..<Int.random(in: 1...8, using: &generator) where !bytes.isEmpty {
                    let index = Int.random(in: 0..<bytes.count, using: &generator)
                    switch Int.random(in: 0..<3, using: &generator) {
                    case 0: bytes[index] = UInt8.random(in: 0...255, using: &generator)
                    case 1: bytes.remove(at: index)
                    default: bytes.insert(UInt8.random(in: 0...255, using: &generator), at: index)
                    }
                }
            default:
                let alphabet = Array("GET POST /api/action?token=&Content-Length: 9\r\n{}\":,Cookie cordis_console=ab".utf8)
                bytes = (0..<Int.random(in: 0...400, using: &generator)).map { _ in alphabet.randomElement(using: &generator) ?? 0 }
            }
            let decision = WebConsole.decide(bytes, access: Self.access)
            switch decision {
            case .needMore:
                #expect(bytes.count <= HTTPRequest.maxHeadBytes + WebConsole.maxBodyBytes)
            case .answer:
                let status = Self.status(decision) ?? 0
                #expect([200, 302, 400, 401, 403, 404, 405, 413, 415, 431, 505].contains(status), "round \(round): \(status)")
            case .serve:
                #expect(bytes.contains(Array("cordis_console=\(Self.token.text)".utf8)) || bytes.contains(Array("token=\(Self.token.text)".utf8)),
                        "round \(round): served without the token")
            }
        }
    }
}

extension Array where Element == UInt8 {
    /// Whether `other` occurs in this array.
    fileprivate func contains(_ other: [UInt8]) -> Bool {
        guard !other.isEmpty, other.count <= count else { return other.isEmpty }
        return (0...(count - other.count)).contains { start in self[start..<(start + other.count)].elementsEqual(other) }
    }
}
