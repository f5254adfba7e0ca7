/// Something the transport reports for logs: a refused peer, a closed connection and why, a
/// reclaimed stale socket file.
///
/// Events are delivered to the `EventLoop`'s observer on whichever thread noticed them (usually the
/// loop thread): an observer must be quick and must not block. Each has a stable `kind`; the message
/// varies (it names the connection and peer), so summarise by kind (see `Kind.repeatable`).
public struct TransportEvent: Sendable, CustomStringConvertible {
    /// What happened.
    public struct Kind: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        /// The stable identifier.
        public let rawValue: String
        /// Creates a kind; prefer the static values.
        public init(rawValue: String) { self.rawValue = rawValue }
        /// The identifier.
        public var description: String { rawValue }

        /// A listener refused a peer by its credentials, before reading anything from it.
        public static let peerRefused = Kind(rawValue: "peerRefused")
        /// A listener refused a connection because it holds its maximum number.
        public static let connectionLimitReached = Kind(rawValue: "connectionLimitReached")
        /// A listener closed a connection that had not finished its handshake to make room for a new
        /// one (see `ListenerOptions.maxPendingHandshakes`).
        public static let handshakeShed = Kind(rawValue: "handshakeShed")
        /// A connection closed; `error` says why when it was not an orderly close.
        public static let connectionClosed = Kind(rawValue: "connectionClosed")
        /// A stale Unix socket file, left by a process that no longer listens, was removed.
        public static let staleSocketReclaimed = Kind(rawValue: "staleSocketReclaimed")
        /// `accept` failed (for example out of file descriptors); the listener keeps going.
        public static let acceptFailed = Kind(rawValue: "acceptFailed")

        /// The kinds a peer can make repeat as fast as it can connect (`peerRefused`,
        /// `connectionLimitReached`, `handshakeShed`, `connectionClosed`, `acceptFailed`): an observer
        /// that logs them should count them per kind and summarise, not write a line each.
        public static let repeatable: Set<Kind> = [
            .peerRefused, .connectionLimitReached, .handshakeShed, .connectionClosed, .acceptFailed,
        ]
    }

    /// What happened.
    public var kind: Kind
    /// A sentence for the log.
    public var message: String
    /// The connection concerned, when there is one.
    public var connectionID: UInt64?
    /// The peer's credentials (Unix sockets), when known.
    public var credentials: PeerCredentials?
    /// The error behind the event, when there is one.
    public var error: TransportError?

    /// Creates an event.
    package init(
        _ kind: Kind, _ message: String, connectionID: UInt64? = nil, credentials: PeerCredentials? = nil,
        error: TransportError? = nil
    ) {
        self.kind = kind
        self.message = message
        self.connectionID = connectionID
        self.credentials = credentials
        self.error = error
    }

    /// `kind: message`.
    public var description: String { "\(kind): \(message)" }
}
