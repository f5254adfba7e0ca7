/// How a `Link` bounds its handshake and frames and what it answers on the loop thread.
public struct LinkOptions: Sendable, Hashable {
    /// How long the handshake may take before the link is closed with `handshakeTimeout`.
    public var handshakeTimeout: Duration
    /// The largest frame accepted and sent after the handshake (before it, `Handshake.maxFrameSize`).
    public var maxFrameSize: Int
    /// How long a failed handshake waits before its `reject` is sent and the connection closed, so a
    /// peer probing secrets or names is not answered faster than this (200 ms by default).
    public var failureDelay: Duration
    /// Whether `pong`s are handed to the consumer too; they always refresh `lastHeard`.
    public var deliversPongs: Bool
    /// Where the link counts the messages it sends and receives after the handshake (nil: not counted).
    public var traffic: TrafficCounter?

    /// Creates options; the defaults follow the contracts (frames 4 MiB).
    public init(
        handshakeTimeout: Duration = .seconds(5), maxFrameSize: Int = Frame.defaultMaxSize, deliversPongs: Bool = false,
        failureDelay: Duration = .milliseconds(200), traffic: TrafficCounter? = nil
    ) {
        self.traffic = traffic
        self.failureDelay = failureDelay
        self.handshakeTimeout = handshakeTimeout
        self.maxFrameSize = maxFrameSize
        self.deliversPongs = deliversPongs
    }
}
