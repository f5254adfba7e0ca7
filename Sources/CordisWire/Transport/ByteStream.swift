/// A plain TCP byte stream on an `EventLoop`, without frames or a handshake: what an HTTP client needs
/// to speak to a coordination service (etcd's JSON gateway).
///
/// It is a `Connection` with raw framing, so it runs on the same engine as every Cordis link: reads
/// run on the loop thread into a bounded inbound queue, and when it holds `maxBufferedBytes` the
/// stream stops reading until the single consumer of `read()` drains it. Writes are made at once from
/// the caller's thread where the socket takes them; the rest waits, and more than `maxBufferedBytes`
/// waiting (a peer that does not read) ends the stream with `outboundBufferFull`.
package final class ByteStream: Sendable {
    /// The most bytes kept waiting in either direction.
    package let maxBufferedBytes: Int
    private let connection: Connection

    private init(connection: Connection, maxBufferedBytes: Int) {
        self.connection = connection
        self.maxBufferedBytes = maxBufferedBytes
    }

    /// Connects to `host` (a numeric address or a name the system resolves) on `port`.
    ///
    /// - Throws: `TransportError` (`connectionRefused`, `connectTimeout`, `addressUnavailable`, `invalidAddress`,
    ///   `systemError`), as `EventLoop.connect(to:limits:tls:)`.
    package static func connect(
        host: String, port: UInt16, on loop: EventLoop, timeout: Duration, maxBufferedBytes: Int = 1 << 20
    ) async throws -> ByteStream {
        let limits = ConnectionLimits(
            inboundQueueFrames: Int.max, inboundQueueBytes: maxBufferedBytes, outboundBufferBytes: maxBufferedBytes,
            handshakeTimeout: nil, connectTimeout: timeout, handshakeQueueFrames: Int.max, handshakeQueueBytes: maxBufferedBytes)
        let connection = try await loop.connect(to: .tcp(host: host, port: port), limits: limits, framing: .raw)
        connection.markEstablished()
        return ByteStream(connection: connection, maxBufferedBytes: maxBufferedBytes)
    }

    /// Writes `bytes` (any thread).
    ///
    /// - Throws: `TransportError` `closed` after `close()`, `connectionReset` when the socket failed,
    ///   `outboundBufferFull` when the peer does not read (the stream ends), `tooLarge` when `bytes`
    ///   alone are more than `maxBufferedBytes`.
    package func write(_ bytes: [UInt8]) throws(TransportError) {
        try connection.enqueueFramed(bytes)
    }

    /// The next bytes read, nil at the end of the stream.
    ///
    /// - Throws: the `TransportError` that ended the stream, or `CancellationError`.
    package func read() async throws -> [UInt8]? {
        try await connection.nextFrame()
    }

    /// The bytes waiting to be written.
    package var bufferedOutboundBytes: Int { connection.bufferedOutboundBytes }

    /// Closes the socket at once, dropping what waits to be written; bytes already read stay readable,
    /// then `read()` returns nil. Idempotent, any thread.
    package func close() {
        connection.closeNow()
    }
}
