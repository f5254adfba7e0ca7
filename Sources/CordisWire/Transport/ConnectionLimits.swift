/// The bounds every connection lives within: frame size, queued inbound frames, buffered outbound
/// bytes, and how long the handshake, the dial and the closing drain may take.
///
/// `outboundBufferBytes` must be at least `maxFrameSize` plus the frame header, or a single large
/// frame could never be queued.
public struct ConnectionLimits: Sendable, Hashable {
    /// The largest frame payload accepted from the peer; a larger one closes the connection after a
    /// best-effort error frame (4 MiB by default).
    public var maxFrameSize: Int
    /// How many frames may wait for the consumer before the connection stops reading its socket.
    public var inboundQueueFrames: Int
    /// How many payload bytes may wait for the consumer before the connection stops reading its socket.
    public var inboundQueueBytes: Int
    /// How many bytes may wait to be written before the connection is closed with
    /// `outboundBufferFull` (the peer is not reading).
    public var outboundBufferBytes: Int
    /// How long a new connection may take to be marked established (its handshake) before it is
    /// closed with `handshakeTimeout`; nil disables the deadline.
    public var handshakeTimeout: Duration?
    /// The largest frame payload accepted before the connection is marked established (64 KiB by
    /// default): a peer that has not authenticated cannot make this side buffer more.
    public var handshakeFrameSize: Int
    /// How many frames may wait for the consumer before the connection is established.
    public var handshakeQueueFrames: Int
    /// How many payload bytes may wait for the consumer before the connection is established.
    public var handshakeQueueBytes: Int
    /// How long dialling may take.
    public var connectTimeout: Duration
    /// How long an orderly close waits for the outbound bytes to leave and the peer to close its side.
    public var drainTimeout: Duration

    /// Creates limits; the defaults follow the contracts (frames 4 MiB).
    public init(
        maxFrameSize: Int = Frame.defaultMaxSize,
        inboundQueueFrames: Int = 1024,
        inboundQueueBytes: Int = 16 * 1024 * 1024,
        outboundBufferBytes: Int = 16 * 1024 * 1024,
        handshakeTimeout: Duration? = .seconds(5),
        connectTimeout: Duration = .seconds(5),
        drainTimeout: Duration = .seconds(1),
        handshakeFrameSize: Int = Handshake.maxFrameSize,
        handshakeQueueFrames: Int = 4,
        handshakeQueueBytes: Int = 2 * Handshake.maxFrameSize
    ) {
        self.handshakeFrameSize = handshakeFrameSize
        self.handshakeQueueFrames = handshakeQueueFrames
        self.handshakeQueueBytes = handshakeQueueBytes
        self.maxFrameSize = maxFrameSize
        self.inboundQueueFrames = inboundQueueFrames
        self.inboundQueueBytes = inboundQueueBytes
        self.outboundBufferBytes = outboundBufferBytes
        self.handshakeTimeout = handshakeTimeout
        self.connectTimeout = connectTimeout
        self.drainTimeout = drainTimeout
    }
}
