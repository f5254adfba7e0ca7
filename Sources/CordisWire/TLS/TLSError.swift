import COpenSSL

/// A TLS failure: files that cannot be used, a handshake refused (the peer's certificate is from
/// another CA, expired, names someone else, or is missing), or bytes that are not TLS.
public struct TLSError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What kind of failure it is.
    public struct Code: RawRepresentable, Sendable, Hashable {
        /// The code's name.
        public var rawValue: String
        /// Creates a code.
        public init(rawValue: String) { self.rawValue = rawValue }
        /// A certificate, key or CA file cannot be read or does not match.
        public static let configuration = Code(rawValue: "configuration")
        /// The peer's certificate did not verify against the CA (other CA, expired, not yet valid).
        public static let certificate = Code(rawValue: "certificate")
        /// The peer sent no certificate.
        public static let noCertificate = Code(rawValue: "no-certificate")
        /// The certificate names another node or operator than expected, or no Cordis name.
        public static let wrongName = Code(rawValue: "wrong-name")
        /// The handshake or the session failed (bad bytes, alert from the peer, protocol error).
        public static let handshake = Code(rawValue: "handshake")
        /// The session was closed by the peer.
        public static let closed = Code(rawValue: "closed")
    }

    /// The kind of failure.
    public var code: Code
    /// What happened, with libssl's reason where it has one.
    public var message: String

    /// Creates an error.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// `message`.
    public var description: String { message }

    /// libssl's queued errors as one line (and the queue emptied).
    static func drainQueue() -> String {
        var reasons: [String] = []
        while true {
            let code = ERR_get_error()
            guard code != 0 else { break }
            var buffer = [CChar](repeating: 0, count: 256)
            ERR_error_string_n(code, &buffer, buffer.count)
            reasons.append(String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
        return reasons.joined(separator: "; ")
    }
}
