/// One etcd client URL: `http://HOST:PORT`.
package struct EtcdEndpoint: Hashable, Sendable, CustomStringConvertible {
    /// The host: an IPv4 or IPv6 address or a name.
    package var host: String
    /// The client port.
    package var port: UInt16

    package init(host: String, port: UInt16) {
        self.host = host
        self.port = port
    }

    package var description: String { host.contains(":") ? "http://[\(host)]:\(port)" : "http://\(host):\(port)" }

    /// Parses `http://HOST:PORT` (a path of `/` is allowed; `https` is refused: TLS to etcd is not supported).
    ///
    /// - Throws: `EtcdError` `invalidEndpoint` with a message naming the URL.
    package init(parsing url: String) throws(EtcdError) {
        var rest = Substring(url)
        if rest.hasPrefix("https://") {
            throw EtcdError(.invalidEndpoint, "\(url): https is not supported; use an http:// client URL on a trusted network")
        }
        guard rest.hasPrefix("http://") else {
            throw EtcdError(.invalidEndpoint, "\(url) is not an http://HOST:PORT URL")
        }
        rest = rest.dropFirst("http://".count)
        if rest.hasSuffix("/") { rest = rest.dropLast() }
        let host: Substring
        let portText: Substring
        if rest.hasPrefix("[") {
            guard let close = rest.firstIndex(of: "]"), rest[rest.index(after: close)...].hasPrefix(":") else {
                throw EtcdError(.invalidEndpoint, "\(url) is not an http://[IPv6]:PORT URL")
            }
            host = rest[rest.index(after: rest.startIndex)..<close]
            portText = rest[rest.index(close, offsetBy: 2)...]
        } else {
            guard let colon = rest.lastIndex(of: ":") else {
                throw EtcdError(.invalidEndpoint, "\(url) has no port (http://HOST:PORT)")
            }
            host = rest[..<colon]
            portText = rest[rest.index(after: colon)...]
        }
        guard !host.isEmpty, !host.contains("/"), let port = UInt16(portText), port > 0 else {
            throw EtcdError(.invalidEndpoint, "\(url) is not an http://HOST:PORT URL")
        }
        self.host = String(host)
        self.port = port
    }

    /// The endpoints of a discovery setting: `etcd:URL[,URL...]`.
    ///
    /// - Throws: `EtcdError` `invalidEndpoint` naming what is wrong.
    package static func list(parsing setting: String) throws(EtcdError) -> [EtcdEndpoint] {
        guard setting.hasPrefix("etcd:") else {
            throw EtcdError(.invalidEndpoint, "\(setting) is not etcd:URL[,URL...]")
        }
        let urls = setting.dropFirst("etcd:".count).split(separator: ",", omittingEmptySubsequences: false)
        guard !urls.isEmpty, urls.count <= 16 else {
            throw EtcdError(.invalidEndpoint, "\(setting): give from 1 to 16 etcd client URLs")
        }
        var endpoints: [EtcdEndpoint] = []
        for url in urls { endpoints.append(try EtcdEndpoint(parsing: String(url))) }
        return endpoints
    }
}
