#if canImport(Glibc)
import Glibc
#endif

/// How a `Listener` binds and whom it admits: connection limits, the most connections at once, the
/// peer policy and file mode and group of a Unix socket.
public struct ListenerOptions: Sendable, Hashable {
    /// The bounds of every accepted connection.
    public var limits: ConnectionLimits
    /// The most connections held at once; further peers are closed on accept and reported.
    public var maxConnections: Int
    /// Which Unix-socket peers are admitted (ignored for TCP).
    public var policy: PeerPolicy
    /// The permission bits of a Unix socket file (0660 by default).
    public var socketMode: UInt32
    /// The group given to a Unix socket file (`--socket-group`); nil keeps the process's group.
    public var socketGroup: UInt32?
    /// The listen backlog: connections the kernel completes before they are accepted (1024 by
    /// default, so a flood of connects does not make the kernel drop a console's first packet, which
    /// it would retry only a second later; capped by `net.core.somaxconn`).
    public var backlog: Int32
    /// The most accepted connections that have not finished their handshake; when a new one arrives
    /// and the bound is reached, among the sources holding the most, one that sent no whole frame yet
    /// before one that did, and the one that stalled longest (whose last whole frame, or accept, is the
    /// oldest) among those, is closed with `handshakeShed`.
    public var maxPendingHandshakes: Int
    /// The most connections still in their handshake from one source: one IP address for TCP, one
    /// user id for a Unix socket; the source's connection that stalled longest (by the same rule) makes
    /// room for its new one.
    public var maxPendingHandshakesPerSource: Int
    /// The TLS context of a TCP listener: every accepted TCP connection runs TLS from its first byte
    /// (nil: plain; ignored for Unix sockets, which keep peer credentials).
    public var tls: TLSContext?

    /// Creates options; the defaults follow the contracts.
    public init(
        limits: ConnectionLimits = ConnectionLimits(), maxConnections: Int = 1024, policy: PeerPolicy = PeerPolicy(),
        socketMode: UInt32 = 0o660, socketGroup: UInt32? = nil, backlog: Int32 = 1024,
        maxPendingHandshakes: Int = 64, maxPendingHandshakesPerSource: Int = 16, tls: TLSContext? = nil
    ) {
        self.tls = tls
        self.maxPendingHandshakes = maxPendingHandshakes
        self.maxPendingHandshakesPerSource = maxPendingHandshakesPerSource
        self.limits = limits
        self.maxConnections = maxConnections
        self.policy = policy
        self.socketMode = socketMode
        self.socketGroup = socketGroup
        self.backlog = backlog
    }
}
