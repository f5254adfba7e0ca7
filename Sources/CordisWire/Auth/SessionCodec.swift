/// Encodes and decodes the frames of a link once its handshake is over: plain JSON frames on an
/// unauthenticated link, sequenced and MACed frames on an authenticated one.
///
/// Get one from `HandshakeResult.sessionCodec()`. Sending and receiving keep separate state, so a copy
/// may serve each direction (one thread sending, another receiving). Every error closes the link.
package struct SessionCodec: Sendable {
    /// Writes the frames (its `maxFrameSize` bounds what is sent).
    package var encoder: FrameEncoder
    private var sealer: FrameSealer?
    private var opener: FrameOpener?
    /// The protocol version the two sides agreed on (the older of theirs): link-level codes sent are
    /// spelled for it.
    package let version: ProtocolVersion

    /// A codec with the given frame keys (nil: unauthenticated), frame limit and agreed version.
    package init(keys: SessionKeys?, maxFrameSize: Int = Frame.defaultMaxSize, version: ProtocolVersion = .current) {
        self.version = version
        encoder = FrameEncoder(maxFrameSize: maxFrameSize)
        sealer = keys.map { FrameSealer(key: $0.sending) }
        opener = keys.map { FrameOpener(key: $0.receiving) }
    }

    /// True when frames carry a sequence number and MAC.
    package var isAuthenticated: Bool { sealer != nil }

    /// Appends `message` as one frame to `buffer`; throws `.oversize` and then leaves the buffer unchanged.
    package mutating func append(_ message: WireMessage, to buffer: inout [UInt8]) throws(WireError) {
        if sealer != nil {
            try sealer?.append(message, to: &buffer, encoder: encoder)
        } else {
            try encoder.append(message, to: &buffer)
        }
    }

    /// Appends subscription `id`'s copy of a shared event as one frame to `buffer`; throws `.oversize`
    /// and then leaves the buffer unchanged.
    package mutating func append(_ event: SharedEvent, id: Int, to buffer: inout [UInt8]) throws(WireError) {
        if sealer != nil {
            try sealer?.append(to: &buffer, encoder: encoder) { event.encode(id: id, into: &$0) }
        } else {
            try encoder.append(to: &buffer) { (payload: inout [UInt8]) throws(WireError) in event.encode(id: id, into: &payload) }
        }
    }

    /// Where the sending stands: the sequence number of the next frame sealed (0 on an unauthenticated
    /// link, whose frames carry none).
    package var sealMark: Int { sealer?.sequence ?? 0 }

    /// Takes back the frames sealed since `mark` (`sealMark` then) that were not sent: the next frame
    /// carries the sequence number the first of them had, so the peer sees no gap.
    package mutating func rewind(to mark: Int) {
        sealer?.rewind(to: mark)
    }

    /// Verifies (when authenticated) and decodes one received frame.
    ///
    /// Throws `.badMAC` or `.replay` for a frame that fails authentication, or a decoding error (see
    /// `WireMessage.init(frame:)`). An unknown type decodes as `.unknown`: answer it with
    /// `WireMessage.unknownTypeReply(to:version:)`.
    package mutating func decode(_ frame: Frame) throws(WireError) -> WireMessage {
        guard var opener else { return try WireMessage(frame: frame) }
        defer { self.opener = opener }
        return try opener.open(frame)
    }
}
