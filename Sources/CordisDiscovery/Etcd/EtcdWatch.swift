import CordisJSON
import CordisWire
import Synchronization

/// One watch of a key prefix on etcd's JSON gateway: a `POST /v3/watch` whose chunked answer streams one
/// JSON object per line. Its `messages` end when the stream does (the connection failed, the watch
/// was cancelled or compacted, the consumer fell `buffer` messages behind, or nothing at all arrived for
/// the silence limit, which is how a stalled member or a vanished connection shows): the consumer then lists
/// the prefix again and watches from the next revision. Nothing here re-connects on its own.
package final class EtcdWatch: Sendable {
    /// What the watch reports.
    package enum Message: Equatable, Sendable {
        /// The watch is in place (at the revision in the header).
        case created(revision: Int64)
        /// Keys changed, in order, up to `revision`.
        case changes([EtcdChange], revision: Int64)
    }

    /// The largest line (one watch answer) accepted.
    package static let maxLineBytes = 4 << 20

    /// The messages, in order; the stream throws `EtcdError` when the watch broke (`compacted` when the
    /// revision is gone, `overflow` when the consumer fell behind, `unavailable` when etcd went away).
    package let messages: AsyncThrowingStream<Message, any Error>
    private let task: Mutex<Task<Void, Never>?>

    init(client: EtcdClient, prefix: String, from revision: Int64, buffer: Int, silenceLimit: Duration) {
        let (stream, continuation) = AsyncThrowingStream.makeStream(
            of: Message.self, throwing: (any Error).self, bufferingPolicy: .bufferingOldest(max(1, buffer)))
        messages = stream
        task = Mutex(nil)
        let body: JSONValue = [
            "create_request": [
                "key": .string(EtcdCoding.base64(prefix)),
                "range_end": .string(EtcdCoding.base64(EtcdCoding.prefixEnd(prefix))),
                "start_revision": .string(String(revision)),
                // A burst larger than etcd's request limit arrives as several lines, each within
                // `maxLineBytes`, rather than as one line this client would refuse.
                "fragment": true,
            ],
        ]
        let work = Task {
            do {
                try await Self.run(client: client, body: body, silenceLimit: silenceLimit, into: continuation)
                continuation.finish(throwing: EtcdError(.unavailable, "the watch stream ended"))
            } catch {
                continuation.finish(throwing: error)
            }
        }
        task.withLock { $0 = work }
        continuation.onTermination = { _ in work.cancel() }
    }

    /// Ends the watch.
    package func cancel() {
        task.withLock { $0 }?.cancel()
    }

    private static func run(
        client: EtcdClient, body: JSONValue, silenceLimit: Duration,
        into continuation: AsyncThrowingStream<Message, any Error>.Continuation
    ) async throws {
        let endpoint = client.preferred
        let exchange: HTTPExchange
        client.traffic?.count(.etcd, sent: 1)
        do {
            exchange = try await HTTPExchange.post(
                host: endpoint.host, port: endpoint.port, path: "/v3/watch", body: body.serialized(), on: client.loop,
                connectTimeout: client.requestTimeout, deadline: nil, maxBodyBytes: Int.max)
        } catch let error as TransportError {
            client.rotate(from: endpoint)
            throw EtcdError(.unavailable, "\(endpoint): \(error.message)")
        }
        defer { exchange.close() }
        let watchdog = SilenceWatchdog(limit: silenceLimit, on: client.loop) { exchange.close() }
        defer { watchdog.stop() }
        do {
            try await follow(exchange, from: endpoint, client: client, watchdog: watchdog, into: continuation)
        } catch where watchdog.fired {
            throw EtcdError(.unavailable, "\(endpoint) sent nothing on the watch for \(silenceLimit); listing again")
        }
        if watchdog.fired {
            throw EtcdError(.unavailable, "\(endpoint) sent nothing on the watch for \(silenceLimit); listing again")
        }
    }

    private static func follow(
        _ exchange: HTTPExchange, from endpoint: EtcdEndpoint, client: EtcdClient, watchdog: SilenceWatchdog,
        into continuation: AsyncThrowingStream<Message, any Error>.Continuation
    ) async throws {
        try await withTaskCancellationHandler {
            var lines = LineSplitter(maxLineBytes: maxLineBytes)
            var status = 0
            while let part = try await exchange.nextPart() {
                watchdog.heard()
                switch part {
                case .head(let head):
                    status = head.status
                    guard status == 200 else { throw EtcdError(.refused, "\(endpoint)/v3/watch answered \(status)") }
                case .body(let bytes):
                    let complete: [[UInt8]]
                    do {
                        complete = try lines.feed(bytes)
                    } catch {
                        throw EtcdError(.malformed, "\(endpoint)/v3/watch: \(error)")
                    }
                    for line in complete {
                        client.traffic?.count(.etcd, received: 1)
                        guard let message = try decode(line, from: endpoint) else { continue }
                        if case .dropped = continuation.yield(message) {
                            throw EtcdError(.overflow, "the watch of \(endpoint) fell behind; listing again")
                        }
                    }
                case .end:
                    client.rotate(from: endpoint)
                    throw EtcdError(.unavailable, "\(endpoint) ended the watch stream")
                }
            }
        } onCancel: {
            exchange.close()
        }
    }

    /// One line of the stream: nil for answers that carry nothing (progress without events).
    static func decode(_ line: [UInt8], from endpoint: EtcdEndpoint) throws(EtcdError) -> Message? {
        let answer: JSONValue
        do {
            answer = try JSONParser().parse(line)
        } catch {
            throw EtcdError(.malformed, "\(endpoint)/v3/watch sent a line that is not JSON")
        }
        if let error = answer["error"] {
            throw EtcdClient.refusal(error, status: 500, at: "\(endpoint)/v3/watch")
        }
        guard let result = answer["result"], result.objectValue != nil else {
            throw EtcdError(.malformed, "\(endpoint)/v3/watch sent no result")
        }
        if let compacted = EtcdCoding.int64(result["compact_revision"]), compacted > 0 {
            throw EtcdError(.compacted, "the watched revision was compacted (now \(compacted))")
        }
        if result["canceled"]?.boolValue == true {
            throw EtcdError(.refused, "etcd cancelled the watch: \(result["cancel_reason"]?.stringValue ?? "")")
        }
        let revision = try EtcdCoding.revision(result)
        if result["created"]?.boolValue == true { return .created(revision: revision) }
        guard let events = result["events"]?.arrayValue, !events.isEmpty else { return nil }
        var changes: [EtcdChange] = []
        for event in events {
            let kv = try EtcdCoding.keyValue(event["kv"])
            if event["type"]?.stringValue == "DELETE" {
                changes.append(.delete(key: kv.key, revision: kv.modRevision))
            } else {
                changes.append(.put(kv))
            }
        }
        return .changes(changes, revision: revision)
    }
}
