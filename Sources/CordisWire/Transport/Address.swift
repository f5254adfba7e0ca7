import CCordisShim

#if canImport(Glibc)
import Glibc
#endif

/// Where a node listens or is dialled: `unix:/path`, `tcp:HOST:PORT` or `tcp:[IPv6]:PORT`.
///
/// Port 0 asks the system for an ephemeral port; a listener reports its real bound address. The text
/// form round-trips through `init(parsing:)` and `description`.
public enum Address: Hashable, Sendable, CustomStringConvertible {
    /// A Unix stream socket at a file system path (at most 107 bytes).
    case unix(path: String)
    /// A TCP endpoint: a host name, an IPv4 address or an IPv6 address (without brackets), and a port.
    case tcp(host: String, port: UInt16)

    /// The longest Unix socket path the kernel accepts, in bytes.
    public static let maximumUnixPathBytes = 107

    /// Parses the text form.
    ///
    /// - Throws: `TransportError` with code `invalidAddress` naming what is wrong with the text.
    public init(parsing text: String) throws {
        if text.hasPrefix("unix:") {
            let path = String(text.dropFirst(5))
            guard !path.isEmpty else {
                throw TransportError(.invalidAddress, "address \"\(text)\" has an empty Unix socket path")
            }
            guard path.utf8.count <= Self.maximumUnixPathBytes else {
                throw TransportError(
                    .invalidAddress,
                    "Unix socket path in \"\(text)\" is \(path.utf8.count) bytes; at most \(Self.maximumUnixPathBytes) fit")
            }
            guard !path.utf8.contains(0) else {
                throw TransportError(.invalidAddress, "Unix socket path in \"\(text)\" contains a NUL byte")
            }
            self = .unix(path: path)
            return
        }
        guard text.hasPrefix("tcp:") else {
            throw TransportError(
                .invalidAddress,
                "address \"\(text)\" must start with unix: or tcp: (unix:/path, tcp:HOST:PORT, tcp:[IPv6]:PORT)")
        }
        let rest = text.dropFirst(4)
        let host: Substring
        let portText: Substring
        if rest.hasPrefix("[") {
            guard let close = rest.firstIndex(of: "]") else {
                throw TransportError(.invalidAddress, "address \"\(text)\" opens \"[\" without closing it")
            }
            host = rest[rest.index(after: rest.startIndex)..<close]
            let afterBracket = rest[rest.index(after: close)...]
            guard afterBracket.hasPrefix(":") else {
                throw TransportError(.invalidAddress, "address \"\(text)\" needs :PORT after the IPv6 address")
            }
            portText = afterBracket.dropFirst()
            guard ccordis_numeric_family(String(host)) == AF_INET6 else {
                throw TransportError(.invalidAddress, "\"\(host)\" in \"\(text)\" is not an IPv6 address")
            }
        } else {
            guard let colon = rest.lastIndex(of: ":") else {
                throw TransportError(.invalidAddress, "address \"\(text)\" needs a port (tcp:HOST:PORT)")
            }
            host = rest[..<colon]
            portText = rest[rest.index(after: colon)...]
            guard !host.contains(":") else {
                throw TransportError(
                    .invalidAddress, "IPv6 address in \"\(text)\" must be in brackets (tcp:[::1]:PORT)")
            }
        }
        guard !host.isEmpty else {
            throw TransportError(.invalidAddress, "address \"\(text)\" has an empty host")
        }
        guard !portText.isEmpty, portText.allSatisfy({ $0.isASCII && $0.isNumber }),
            portText.count <= 5, let port = UInt16(portText)
        else {
            throw TransportError(
                .invalidAddress, "port \"\(portText)\" in \"\(text)\" is not a number from 0 to 65535")
        }
        self = .tcp(host: String(host), port: port)
    }

    /// The text form: `unix:/path`, `tcp:HOST:PORT`, or `tcp:[IPv6]:PORT` when the host contains a colon.
    public var description: String {
        switch self {
        case .unix(let path):
            return "unix:\(path)"
        case .tcp(let host, let port):
            return host.contains(":") ? "tcp:[\(host)]:\(port)" : "tcp:\(host):\(port)"
        }
    }

    /// True for a `unix:` address.
    public var isUnix: Bool {
        if case .unix = self { return true }
        return false
    }
}
