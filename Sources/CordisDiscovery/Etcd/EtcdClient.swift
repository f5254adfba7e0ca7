import CordisJSON
import CordisWire
import Synchronization

/// A client of etcd's v3 JSON gateway (`/v3/kv/*`, `/v3/lease/*`, `/v3/watch`) over the node's own
/// event loop: one short HTTP/1.1 connection per request, each under a deadline, tried on the next
/// endpoint when one does not answer. Answers are bounded (`maxAnswerBytes`); watches are `EtcdWatch`.
///
/// Safe to use from any task (the endpoint in use is guarded by a mutex).
package final class EtcdClient: Sendable {
    /// The endpoints, in the order given.
    package let endpoints: [EtcdEndpoint]
    /// How long one request may take on one endpoint.
    package let requestTimeout: Duration
    /// The largest answer read, in bytes.
    package let maxAnswerBytes: Int
    /// Where requests (sent) and answers and watch messages (received) are counted, as `etcd`.
    package let traffic: TrafficCounter?
    let loop: EventLoop
    private let current = Mutex(0)

    /// A client of `endpoints` (at least one) on `loop`. Host names are resolved here, once (blocking,
    /// through the system resolver), so no request waits on a resolver later; a name that does not
    /// resolve now is kept and tried again with each request.
    package init(
        endpoints: [EtcdEndpoint], loop: EventLoop, requestTimeout: Duration = .seconds(1),
        maxAnswerBytes: Int = 8 << 20, traffic: TrafficCounter? = nil
    ) {
        self.traffic = traffic
        precondition(!endpoints.isEmpty, "an etcd client needs an endpoint")
        self.endpoints = endpoints.map { endpoint in
            guard let numeric = try? EventLoop.numericHost(endpoint.host) else { return endpoint }
            return EtcdEndpoint(host: numeric, port: endpoint.port)
        }
        self.loop = loop
        self.requestTimeout = requestTimeout
        self.maxAnswerBytes = maxAnswerBytes
    }

    /// The endpoint requests go to first.
    package var preferred: EtcdEndpoint { endpoints[current.withLock { $0 } % endpoints.count] }

    /// Moves to the next endpoint (after one failed).
    package func rotate(from failed: EtcdEndpoint) {
        current.withLock { index in
            if endpoints[index % endpoints.count] == failed { index = (index + 1) % endpoints.count }
        }
    }

    /// Sends one request; returns the JSON answer. Tries each endpoint once, starting with the preferred,
    /// each for at most `requestTimeout` to connect and as long again to answer; with a `budget`, the
    /// whole request ends within about it: each endpoint left gets an equal share of what remains, so
    /// one that stalls cannot use up the time a healthy one after it needs (a lease renewal must land
    /// before the lease ends).
    ///
    /// - Throws: `EtcdError` (`unavailable` when none answered in time, `refused` for an error answer).
    package func request(_ path: String, _ body: JSONValue, within budget: Duration? = nil) async throws -> JSONValue {
        var lastError = EtcdError(.unavailable, "no etcd endpoint")
        let end = budget.map { ContinuousClock.now + $0 }
        for attempt in 0..<endpoints.count {
            let endpoint = preferred
            var timeout = requestTimeout
            if let end {
                let left = end - ContinuousClock.now
                guard left > .zero else {
                    throw EtcdError(.unavailable, "no etcd endpoint answered within \(budget ?? .zero): \(lastError.message)")
                }
                // Half for the connection, half for the answer, of this endpoint's share.
                timeout = min(requestTimeout, left / (2 * (endpoints.count - attempt)))
            }
            traffic?.count(.etcd, sent: 1)
            do {
                let exchange = try await HTTPExchange.post(
                    host: endpoint.host, port: endpoint.port, path: path, body: body.serialized(), on: loop,
                    connectTimeout: timeout, deadline: timeout, maxBodyBytes: maxAnswerBytes)
                let (status, bytes) = try await exchange.response()
                traffic?.count(.etcd, received: 1)
                let answer: JSONValue
                do {
                    answer = try JSONParser().parse(bytes)
                } catch {
                    throw EtcdError(.malformed, "\(endpoint)\(path) answered \(status) with something that is not JSON")
                }
                guard status == 200 else { throw Self.refusal(answer, status: status, at: "\(endpoint)\(path)") }
                return answer
            } catch let error as EtcdError where error.code == .unavailable || error.code == .malformed {
                lastError = error
                rotate(from: endpoint)
            } catch let error as TransportError {
                lastError = EtcdError(.unavailable, "\(endpoint): \(error.message)")
                rotate(from: endpoint)
            }
        }
        throw lastError
    }

    /// The error of an error answer: `{"error": …, "message": …, "code": N}`.
    static func refusal(_ answer: JSONValue, status: Int, at target: String) -> EtcdError {
        let message = answer["message"]?.stringValue ?? answer["error"]?.stringValue ?? "status \(status)"
        if message.contains("lease not found") { return EtcdError(.leaseNotFound, "\(target): \(message)") }
        if message.contains("compacted") { return EtcdError(.compacted, "\(target): \(message)") }
        // A leader election in progress is worth trying elsewhere.
        if status == 503 || message.contains("leader") || message.contains("timed out") {
            return EtcdError(.unavailable, "\(target): \(message)")
        }
        return EtcdError(.refused, "\(target): \(message)")
    }

    // MARK: - Leases

    /// Grants a lease of `ttl` seconds; returns its id.
    package func grant(ttl: Int) async throws -> Int64 {
        let answer = try await request("/v3/lease/grant", ["TTL": .string(String(ttl))])
        guard let id = EtcdCoding.int64(answer["ID"]), id != 0 else {
            throw EtcdError(.malformed, "a lease grant answer has no lease id")
        }
        return id
    }

    /// Keeps lease `id` alive once, trying the endpoints within `budget` when one is given (see
    /// `request(_:_:within:)`); returns the TTL etcd granted again.
    ///
    /// - Throws: `EtcdError` `leaseNotFound` when the lease expired or was revoked.
    package func keepAlive(lease id: Int64, within budget: Duration? = nil) async throws -> Int64 {
        let answer = try await request("/v3/lease/keepalive", ["ID": .string(String(id))], within: budget)
        guard let result = answer["result"] else { throw EtcdError(.malformed, "a keepalive answer has no result") }
        guard let ttl = EtcdCoding.int64(result["TTL"]) else { throw EtcdError(.malformed, "a keepalive answer has no TTL") }
        guard ttl > 0 else { throw EtcdError(.leaseNotFound, "lease \(id) expired") }
        return ttl
    }

    /// Revokes lease `id` (its keys are deleted at once).
    package func revoke(lease id: Int64) async throws {
        _ = try await request("/v3/lease/revoke", ["ID": .string(String(id))])
    }

    // MARK: - Keys

    /// Every key that starts with `prefix`, and the revision of the store they were read at.
    package func range(prefix: String, limit: Int = 100_000) async throws -> (kvs: [EtcdKeyValue], revision: Int64) {
        let answer = try await request("/v3/kv/range", [
            "key": .string(EtcdCoding.base64(prefix)), "range_end": .string(EtcdCoding.base64(EtcdCoding.prefixEnd(prefix))),
            "limit": .string(String(limit)),
        ])
        var kvs: [EtcdKeyValue] = []
        for kv in answer["kvs"]?.arrayValue ?? [] { kvs.append(try EtcdCoding.keyValue(kv)) }
        return (kvs, try EtcdCoding.revision(answer))
    }

    /// Every key that starts with `prefix`, read in pages at one revision (`revision`, or the store's
    /// latest when nil), at most `maxKeys` of them (`truncated` says more were there): a directory of
    /// any size is read within `maxAnswerBytes` per answer. A page too large for that bound is asked
    /// again with half as many keys (etcd keeps a key and its value within its request limit, 1.5 MiB by
    /// default, so a page of a few always fits).
    ///
    /// - Throws: `EtcdError` (`compacted` when `revision` is gone: list again).
    package func rangePaged(
        prefix: String, at revision: Int64? = nil, pageSize: Int = 256, maxKeys: Int
    ) async throws -> (kvs: [EtcdKeyValue], revision: Int64, truncated: Bool) {
        var kvs: [EtcdKeyValue] = []
        var start = Array(prefix.utf8)
        var pinned = revision
        var size = max(1, pageSize)
        let end = EtcdCoding.prefixEnd(prefix)
        // Bounded: every round reads a page and moves past it, or halves the page size.
        while true {
            var body: JSONObject = [
                "key": .string(EtcdCoding.base64(start)), "range_end": .string(EtcdCoding.base64(end)),
                "limit": .string(String(min(size, maxKeys - kvs.count + 1))),
            ]
            if let pinned { body["revision"] = .string(String(pinned)) }
            let answer: JSONValue
            do {
                answer = try await request("/v3/kv/range", .object(body))
            } catch let error as EtcdError where error.code == .malformed && size > 1 {
                size /= 2
                continue
            }
            if pinned == nil { pinned = try EtcdCoding.revision(answer) }
            let page = try (answer["kvs"]?.arrayValue ?? []).map { kv throws(EtcdError) in try EtcdCoding.keyValue(kv) }
            kvs.append(contentsOf: page)
            if kvs.count > maxKeys {
                return (Array(kvs.prefix(maxKeys)), pinned ?? 0, true)
            }
            guard answer["more"]?.boolValue == true, let last = page.last else { return (kvs, pinned ?? 0, false) }
            let next = Array(last.key.utf8) + [0]
            // A key that does not read back as the bytes etcd holds (not UTF-8) could send the next page
            // back to where this one started: stop there rather than go round.
            guard start.lexicographicallyPrecedes(next) else { return (kvs, pinned ?? 0, true) }
            start = next
        }
    }

    /// The value of `key`, if it exists.
    package func get(_ key: String) async throws -> EtcdKeyValue? {
        let answer = try await request("/v3/kv/range", ["key": .string(EtcdCoding.base64(key))])
        guard let first = answer["kvs"]?.arrayValue?.first else { return nil }
        return try EtcdCoding.keyValue(first)
    }

    /// Sets `key` to `value`, attached to `lease` when given; returns the new revision.
    @discardableResult
    package func put(_ key: String, _ value: [UInt8], lease: Int64? = nil) async throws -> Int64 {
        var body: JSONObject = ["key": .string(EtcdCoding.base64(key)), "value": .string(EtcdCoding.base64(value))]
        if let lease { body["lease"] = .string(String(lease)) }
        return try EtcdCoding.revision(try await request("/v3/kv/put", .object(body)))
    }

    /// Deletes `key`; returns how many keys went.
    @discardableResult
    package func delete(_ key: String) async throws -> Int64 {
        let answer = try await request("/v3/kv/deleterange", ["key": .string(EtcdCoding.base64(key))])
        return EtcdCoding.int64(answer["deleted"]) ?? 0
    }

    /// Creates `key` under `lease` only if no key of that name exists (one transaction). Returns nil
    /// when it was created, else the key that holds the name.
    package func create(_ key: String, _ value: [UInt8], lease: Int64) async throws -> EtcdKeyValue? {
        try await putIf(key, value, lease: lease, compare: ["target": "CREATE", "create_revision": "0"])
    }

    /// Replaces `key` under `lease` only if it was last changed at `modRevision`. Returns nil when it
    /// was replaced, else the key as it is now (nil too when it no longer exists and so was not).
    package func replace(_ key: String, _ value: [UInt8], lease: Int64, ifModifiedAt modRevision: Int64) async throws -> EtcdKeyValue? {
        try await putIf(key, value, lease: lease, compare: ["target": "MOD", "mod_revision": .string(String(modRevision))])
    }

    private func putIf(_ key: String, _ value: [UInt8], lease: Int64, compare: JSONObject) async throws -> EtcdKeyValue? {
        var condition = compare
        condition["key"] = .string(EtcdCoding.base64(key))
        let encodedKey = JSONValue.string(EtcdCoding.base64(key))
        let answer = try await request("/v3/kv/txn", [
            "compare": [.object(condition)],
            "success": [["request_put": ["key": encodedKey, "value": .string(EtcdCoding.base64(value)), "lease": .string(String(lease))]]],
            "failure": [["request_range": ["key": encodedKey]]],
        ])
        if answer["succeeded"]?.boolValue == true { return nil }
        let kvs = answer["responses"]?[0]?["response_range"]?["kvs"]?.arrayValue ?? []
        guard let first = kvs.first else {
            return EtcdKeyValue(key: key, value: [], createRevision: 0, modRevision: 0, lease: 0)
        }
        return try EtcdCoding.keyValue(first)
    }

    // MARK: - Watches

    /// How long a watch may stay silent before it is ended (so the caller lists again): etcd sends
    /// nothing while nothing changes, and a stalled member or a vanished connection looks the same.
    package static let watchSilenceLimit: Duration = .seconds(15)

    /// Watches every key with `prefix` from `revision` on (see `EtcdWatch`); a watch silent for
    /// `silenceLimit` ends with `unavailable`.
    package func watch(
        prefix: String, from revision: Int64, buffer: Int = 64, silenceLimit: Duration = EtcdClient.watchSilenceLimit
    ) -> EtcdWatch {
        EtcdWatch(client: self, prefix: prefix, from: revision, buffer: buffer, silenceLimit: silenceLimit)
    }
}
