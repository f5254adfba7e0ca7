#if canImport(Glibc)
import Glibc
#endif

/// A failure of the socket transport: an address that does not parse or cannot be used, a peer that
/// was refused, or a connection closed for a stated reason.
///
/// Match on `code` (an extendable set of static values); `message` says what happened and what to
/// do, and `errno` carries the system error number when a system call failed.
public struct TransportError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What kind of failure this is.
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        /// The stable identifier of the code.
        public let rawValue: String
        /// Creates a code; prefer the static values.
        public init(rawValue: String) { self.rawValue = rawValue }
        /// The identifier.
        public var description: String { rawValue }

        /// The text is not a `unix:/path`, `tcp:HOST:PORT` or `tcp:[IPv6]:PORT` address.
        public static let invalidAddress = Code(rawValue: "invalid-address")
        /// Another live process already listens on the address (a node exits 69 on it).
        public static let addressInUse = Code(rawValue: "address-in-use")
        /// The address could not be bound or resolved for another reason (permissions, no such host).
        public static let addressUnavailable = Code(rawValue: "address-unavailable")
        /// Nobody listens at the dialled address.
        public static let connectionRefused = Code(rawValue: "connection-refused")
        /// Dialling did not complete within the connect timeout.
        public static let connectTimeout = Code(rawValue: "connect-timeout")
        /// The peer did not complete the handshake in time.
        public static let handshakeTimeout = Code(rawValue: "handshake-timeout")
        /// A frame declared a length over the configured maximum.
        public static let frameTooLarge = Code(rawValue: "frame-too-large")
        /// The peer does not read: the bytes waiting to be sent passed the outbound limit.
        public static let outboundBufferFull = Code(rawValue: "outbound-buffer-full")
        /// An outgoing message is over the frame limit (or larger than the whole outbound buffer): that
        /// one message was not sent and the connection stays up.
        public static let tooLarge = Code(rawValue: "too-large")
        /// The connection had not finished its handshake and was closed to make room for a newer one
        /// (the listener's bound of connections in their handshake was reached).
        public static let handshakeShed = Code(rawValue: "handshake-shed")
        /// The peer reset the connection or the socket reported an error.
        public static let connectionReset = Code(rawValue: "connection-reset")
        /// The connection is closed; nothing more can be sent.
        public static let closed = Code(rawValue: "closed")
        /// The peer's credentials are not allowed by the listener's policy.
        public static let peerRefused = Code(rawValue: "peer-refused")
        /// The listener already holds its maximum number of connections.
        public static let tooManyConnections = Code(rawValue: "too-many-connections")
        /// The file descriptor handed over is not a listening stream socket.
        public static let notListening = Code(rawValue: "not-listening")
        /// A protocol rule of the link was broken (authentication, unexpected message, bad JSON).
        public static let protocolViolation = Code(rawValue: "protocol-violation")
        /// The TLS layer refused the link: the peer's certificate (another CA, expired, another name,
        /// none), bytes that are not TLS (a peer without TLS configured), or a broken TLS session.
        public static let tls = Code(rawValue: "tls")
        /// Any other failed system call.
        public static let systemError = Code(rawValue: "system-error")
    }

    /// What kind of failure this is.
    public var code: Code
    /// What happened and, where it helps, what to do.
    public var message: String
    /// The system error number, when a system call failed.
    public var errno: Int32?

    /// Creates an error.
    public init(_ code: Code, _ message: String, errno: Int32? = nil) {
        self.code = code
        self.message = message
        self.errno = errno
    }

    /// `code: message` plus the system error text when there is one.
    public var description: String {
        guard let errno else { return "\(code): \(message)" }
        return "\(code): \(message): \(Self.systemText(errno))"
    }

    /// An error built from the current `errno` of a failed system call named `call`.
    static func system(_ code: Code, _ message: String, errno number: Int32 = Glibc.errno) -> TransportError {
        TransportError(code, message, errno: number)
    }

    /// The C library's text for a system error number.
    static func systemText(_ number: Int32) -> String {
        guard let text = strerror(number) else { return "errno \(number)" }
        return String(cString: text)
    }
}
