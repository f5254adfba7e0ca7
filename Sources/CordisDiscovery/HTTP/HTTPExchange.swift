import CordisWire
import Synchronization

/// One HTTP/1.1 `POST` on its own connection (`Connection: close`), read with `HTTPResponseDecoder`:
/// either whole (`response`) or part by part as it streams (`nextPart`). A deadline, armed on the event
/// loop's timers, closes the connection when it passes.
package final class HTTPExchange: Sendable {
    private let stream: ByteStream
    private let decoder: Mutex<HTTPResponseDecoder>
    private let timedOut = Mutex(false)
    private let timer = Mutex<UInt64?>(nil)
    private let loop: EventLoop
    /// Where the request went, for messages.
    package let target: String

    private init(stream: ByteStream, loop: EventLoop, maxBodyBytes: Int, target: String) {
        self.stream = stream
        self.loop = loop
        self.decoder = Mutex(HTTPResponseDecoder(maxBodyBytes: maxBodyBytes))
        self.target = target
    }

    /// Connects to `host:port` and sends `POST path` with a JSON `body`. With a `deadline`, the
    /// connection is closed when it passes (the read then fails with a timeout).
    ///
    /// - Throws: `TransportError` when the connection cannot be made or the request not written.
    package static func post(
        host: String, port: UInt16, path: String, body: [UInt8], on loop: EventLoop, connectTimeout: Duration,
        deadline: Duration?, maxBodyBytes: Int
    ) async throws -> HTTPExchange {
        let stream = try await ByteStream.connect(host: host, port: port, on: loop, timeout: connectTimeout)
        let hostHeader = host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
        let exchange = HTTPExchange(stream: stream, loop: loop, maxBodyBytes: maxBodyBytes, target: "\(hostHeader)\(path)")
        if let deadline {
            let id = loop.schedule(after: deadline) { [weak exchange] in
                guard let exchange else { return }
                exchange.timedOut.withLock { $0 = true }
                exchange.stream.close()
            }
            exchange.timer.withLock { $0 = id }
        }
        var request = Array("POST \(path) HTTP/1.1\r\nHost: \(hostHeader)\r\nContent-Type: application/json\r\n".utf8)
        request += Array("Content-Length: \(body.count)\r\nConnection: close\r\n\r\n".utf8)
        request += body
        do {
            try stream.write(request)
        } catch {
            exchange.close()
            throw error
        }
        return exchange
    }

    /// The next part of the response, or nil after its end.
    ///
    /// - Throws: `EtcdError` `unavailable` when the connection fails or the deadline passes,
    ///   `malformed` when the response is not HTTP/1.1 or passes a bound.
    package func nextPart() async throws -> HTTPResponseDecoder.Part? {
        while true {
            do {
                if let part = try decoder.withLock({ decoder throws(HTTPResponseDecoder.Failure) in try decoder.next() }) {
                    return part
                }
                if decoder.withLock({ $0.isComplete }) { return nil }
            } catch {
                close()
                throw EtcdError(.malformed, "\(target): \(error.message)")
            }
            let bytes: [UInt8]?
            do {
                bytes = try await stream.read()
            } catch let error as TransportError {
                close()
                throw EtcdError(.unavailable, "\(target): \(error.message)")
            }
            if timedOut.withLock({ $0 }) {
                close()
                throw EtcdError(.unavailable, "\(target) did not answer in time")
            }
            guard let bytes else {
                do {
                    return try decoder.withLock { decoder throws(HTTPResponseDecoder.Failure) in try decoder.finish() }
                } catch {
                    close()
                    throw EtcdError(.unavailable, "\(target): \(error.message)")
                }
            }
            decoder.withLock { $0.feed(bytes) }
        }
    }

    /// Reads the whole response: its status and body.
    ///
    /// - Throws: as `nextPart()`.
    package func response() async throws -> (status: Int, body: [UInt8]) {
        defer { close() }
        var status = 0
        var body: [UInt8] = []
        while let part = try await nextPart() {
            switch part {
            case .head(let head): status = head.status
            case .body(let bytes): body += bytes
            case .end: return (status, body)
            }
        }
        return (status, body)
    }

    /// Closes the connection and disarms the deadline.
    package func close() {
        if let id = timer.withLock({ $0.take() }) { loop.cancelTimer(id) }
        stream.close()
    }
}
