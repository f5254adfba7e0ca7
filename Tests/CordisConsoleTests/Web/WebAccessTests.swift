import CordisWire
import Testing
@testable import CordisConsole

/// Who may use the web console: the token (in the URL, then the cookie), the console's own `Host`, and
/// for a change its own `Origin`.
@Suite("Web console: the token, cookie and Origin rules")
struct WebAccessTests {
    static let token = HTTPAccessToken(text: String(repeating: "ab", count: 32))
    static let access = WebAccess(token: token, host: "127.0.0.1", port: 8080, secure: false)

    static func request(
        _ method: String = "GET", _ target: String = "/cluster", host: String? = "127.0.0.1:8080", cookie: String? = nil,
        origin: String? = nil
    ) -> HTTPRequest {
        var headers: [HTTPRequest.Header] = []
        if let host { headers.append(.init(name: "host", value: host)) }
        if let cookie { headers.append(.init(name: "cookie", value: cookie)) }
        if let origin { headers.append(.init(name: "origin", value: origin)) }
        return HTTPRequest(method: method, target: target, headers: headers)
    }

    @Test("the token in the URL is taken once and kept in an HttpOnly SameSite=Strict cookie")
    func tokenInTheURL() {
        #expect(Self.access.check(Self.request("GET", "/?token=\(Self.token.text)")) == .allowed(setCookie: true))
        #expect(Self.access.cookieHeader == "Set-Cookie: cordis_console=\(Self.token.text); HttpOnly; SameSite=Strict; Path=/")
        let secure = WebAccess(token: Self.token, host: "127.0.0.1", port: 8080, secure: true)
        #expect(secure.cookieHeader.hasSuffix("; Secure"))
    }

    @Test("the cookie lets a later request in; a wrong or missing token is refused with 401")
    func cookieAndRefusals() {
        #expect(Self.access.check(Self.request(cookie: "other=1; cordis_console=\(Self.token.text)")) == .allowed(setCookie: false))
        for request in [
            Self.request(), Self.request("GET", "/?token=nope"), Self.request(cookie: "cordis_console=\(String(repeating: "cd", count: 32))"),
            Self.request("GET", "/events?token="), Self.request(cookie: "cordis_console"),
        ] {
            guard case .refused(401, _) = Self.access.check(request) else {
                Issue.record("\(request.target) \(request.headers) was let in")
                continue
            }
        }
    }

    @Test("a Host other than the console's own address is refused, so another site's name cannot reach it")
    func hostIsChecked() {
        let cookie = "cordis_console=\(Self.token.text)"
        #expect(Self.access.check(Self.request(host: "localhost:8080", cookie: cookie)) == .allowed(setCookie: false))
        guard case .refused(403, _) = Self.access.check(Self.request(host: "evil.example:8080", cookie: cookie)) else {
            Issue.record("a foreign Host was let in")
            return
        }
        guard case .refused(400, _) = Self.access.check(Self.request(host: nil, cookie: cookie)) else {
            Issue.record("a request without Host was let in")
            return
        }
    }

    @Test("a change needs the console's own Origin, even with the right cookie", arguments: [
        (nil as String?, false), ("http://evil.example", false), ("http://127.0.0.1:8081", false), ("null", false),
        ("https://127.0.0.1:8080", false), ("http://127.0.0.1:8080", true), ("http://localhost:8080", true),
    ])
    func originIsCheckedForChanges(origin: String?, allowed: Bool) {
        let verdict = Self.access.check(Self.request("POST", "/api/action", cookie: "cordis_console=\(Self.token.text)", origin: origin))
        if allowed {
            #expect(verdict == .allowed(setCookie: false))
        } else if case .refused(let status, _) = verdict {
            #expect(status == 403)
        } else {
            Issue.record("a change from \(origin ?? "no origin") was let in")
        }
    }

    @Test("a console on a wildcard address answers any Host but takes changes only from that Host's origin")
    func wildcardHost() {
        let open = WebAccess(token: Self.token, host: "0.0.0.0", port: 8443, secure: true)
        let cookie = "cordis_console=\(Self.token.text)"
        #expect(open.check(Self.request(host: "console.example:8443", cookie: cookie)) == .allowed(setCookie: false))
        #expect(open.check(Self.request("POST", "/api/action", host: "console.example:8443", cookie: cookie,
                                        origin: "https://console.example:8443")) == .allowed(setCookie: false))
        guard case .refused(403, _) = open.check(Self.request("POST", "/api/action", host: "console.example:8443", cookie: cookie,
                                                              origin: "https://evil.example")) else {
            Issue.record("a change from another origin was let in")
            return
        }
    }

    @Test("the token is 64 hex digits from the kernel's generator, new each time")
    func randomTokens() throws {
        let first = try HTTPAccessToken.random()
        let second = try HTTPAccessToken.random()
        #expect(first.text.count == 64)
        #expect(first.text.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) })
        #expect(first != second)
        #expect(first.matches(first.text))
        #expect(!first.matches(second.text))
        #expect(!first.matches(String(first.text.dropLast())))
    }
}
