/// What a connection's frame filter decides about one inbound frame, on the loop thread.
package enum FrameVerdict: Sendable {
    /// Queue this payload (the frame's, or a transformed one such as the payload without its MAC)
    /// for the consumer.
    case deliver([UInt8])
    /// Queue this message, decoded from the frame, for the consumer (a `Link` decodes each frame
    /// once, on the loop thread; the queue holds the message, never the frame too).
    case decoded(WireMessage)
    /// The filter handled the frame (for example answered a heartbeat); nothing is queued.
    case consume
    /// Send this payload back as a frame and queue nothing.
    case reply([UInt8])
    /// Close the connection with this error; nothing is queued.
    case close(TransportError)
}

/// A synchronous function a connection runs on every inbound frame on the loop thread, before the
/// frame is queued: it answers heartbeats without any actor, checks MACs, drives a handshake.
///
/// It must be quick and must not block; it may call the connection's `enqueue(_:)`.
package typealias FrameFilter = @Sendable (_ payload: [UInt8]) -> FrameVerdict
