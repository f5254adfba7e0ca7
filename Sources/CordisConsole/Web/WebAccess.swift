import CordisWire

/// Who may use the web console, decided for every request before it is routed: the request must name
/// this console's own address in `Host` (a page of another site that resolves its name to this address
/// is refused), carry the access token (in the URL the console printed, `?token=`, or then in the cookie
/// set from it), and, for a request that changes anything, come from this console's own page (`Origin`).
struct WebAccess: Sendable {
    /// The name of the cookie that keeps the token (HttpOnly, SameSite=Strict).
    static let cookieName = "cordis_console"

    /// The verdict on one request.
    enum Verdict: Sendable, Hashable {
        /// Served; with `setCookie` the answer sets the cookie (the token came in the URL).
        case allowed(setCookie: Bool)
        /// Refused with `status` (401, 403) and why.
        case refused(status: Int, reason: String)
    }

    /// The token every request needs.
    let token: HTTPAccessToken
    /// The `Host` values this console answers to (`127.0.0.1:8080`, `localhost:8080`); empty: any.
    let hosts: Set<String>
    /// The `Origin` values a change may come from (`http://127.0.0.1:8080`).
    let origins: Set<String>
    /// Whether the console is served over HTTPS (the cookie is then `Secure`).
    let secure: Bool

    /// The rules for a console listening on `host`:`port`; a wildcard host (`0.0.0.0`, `::`) answers to
    /// any `Host` (the token still decides), and a change may then come from any origin naming the
    /// request's own `Host`.
    init(token: HTTPAccessToken, host: String, port: Int, secure: Bool) {
        self.token = token
        self.secure = secure
        let scheme = secure ? "https" : "http"
        var names: [String]
        switch host {
        case "0.0.0.0", "::": names = []
        case "127.0.0.1", "::1", "localhost": names = [host.contains(":") ? "[\(host)]" : host, "localhost"]
        default: names = [host.contains(":") ? "[\(host)]" : host]
        }
        hosts = Set(names.map { "\($0):\(port)" })
        origins = Set(hosts.map { "\(scheme)://\($0)" })
    }

    /// The `Set-Cookie` header that keeps the token for later requests.
    var cookieHeader: String {
        "Set-Cookie: \(Self.cookieName)=\(token.text); HttpOnly; SameSite=Strict; Path=/" + (secure ? "; Secure" : "")
    }

    /// Decides on `request`.
    func check(_ request: HTTPRequest) -> Verdict {
        guard let host = request.header("host") else {
            return .refused(status: 400, reason: "the request has no Host header")
        }
        if !hosts.isEmpty, !hosts.contains(host.lowercased()) {
            return .refused(status: 403, reason: "Host \(host) is not this console's address")
        }
        var verdict: Verdict
        if let given = request.query("token") {
            guard token.matches(given) else { return .refused(status: 401, reason: "the access token in the URL is wrong") }
            verdict = .allowed(setCookie: true)
        } else if let kept = Self.cookie(Self.cookieName, in: request) {
            guard token.matches(kept) else {
                return .refused(status: 401, reason: "the access token in the cookie is not this console's: open the URL the console printed")
            }
            verdict = .allowed(setCookie: false)
        } else {
            return .refused(status: 401, reason: "no access token: open the URL the console printed (it holds the token)")
        }
        if request.method != "GET", request.method != "HEAD" {
            guard let origin = request.header("origin") else {
                return .refused(status: 403, reason: "a change needs an Origin header (it is sent by the console's own page)")
            }
            let allowed = origins.isEmpty ? "\(secure ? "https" : "http")://\(host.lowercased())" == origin.lowercased()
                : origins.contains(origin.lowercased())
            guard allowed else { return .refused(status: 403, reason: "a change from \(origin) is refused: only this console's own page may change the cluster") }
            verdict = .allowed(setCookie: false)
        }
        return verdict
    }

    /// The value of the cookie `name` in the request's `Cookie` headers, or nil.
    static func cookie(_ name: String, in request: HTTPRequest) -> String? {
        for header in request.headers where header.name == "cookie" {
            for pair in header.value.split(separator: ";") {
                let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                guard parts.count == 2, parts[0].trimmingBlanks == name else { continue }
                return String(parts[1].trimmingBlanks)
            }
        }
        return nil
    }
}

extension Substring {
    /// Without leading and trailing spaces and tabs.
    fileprivate var trimmingBlanks: Substring {
        var text = self
        while let first = text.first, first == " " || first == "\t" { text = text.dropFirst() }
        while let last = text.last, last == " " || last == "\t" { text = text.dropLast() }
        return text
    }
}
