import CCordisShim
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

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
    /// - Throws: `TransportError` (`connectionRefused`, `connectTimeout`, `invalidAddress`, `systemError`).
    package static func connect(
        host: String, port: UInt16, on loop: EventLoop, timeout: Duration, maxBufferedBytes: Int = 1 << 20
    ) async throws -> ByteStream {
        let numeric = try EventLoop.numericHost(host)
        let fd = ccordis_stream_socket(ccordis_numeric_family(numeric))
        guard fd >= 0 else { throw TransportError.system(.systemError, "cannot create a TCP socket") }
        let target = Address.tcp(host: host, port: port)
        let status = ccordis_inet_connect(fd, numeric, port)
        if status < 0 {
            let number = errno
            Glibc.close(fd)
            throw TransportError(.connectionRefused, "nobody listens on \(target)", errno: number)
        }
        if status == 1 {
            do {
                try await PendingDial(fd: fd, loop: loop, target: target).wait(timeout: timeout)
            } catch {
                Glibc.close(fd)
                throw error
            }
        }
        let limits = ConnectionLimits(
            inboundQueueFrames: Int.max, inboundQueueBytes: maxBufferedBytes, outboundBufferBytes: maxBufferedBytes,
            handshakeTimeout: nil, handshakeQueueFrames: Int.max, handshakeQueueBytes: maxBufferedBytes)
        let connection = try Connection(fd: fd, loop: loop, limits: limits, framing: .raw)
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
        switch try await connection.nextItem() {
        case .frame(let bytes)?: bytes
        case .message(let message)?: message.encoded
        case nil: nil
        }
    }

    /// The bytes waiting to be written.
    package var bufferedOutboundBytes: Int { connection.bufferedOutboundBytes }

    /// Closes the socket at once, dropping what waits to be written; bytes already read stay readable,
    /// then `read()` returns nil. Idempotent, any thread.
    package func close() {
        connection.closeNow()
    }
}
