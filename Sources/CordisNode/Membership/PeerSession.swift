import Cordis
import CordisWire

/// One established link to a member (or a console), with the calls waiting for its answers.
@CordisActor
final class PeerSession {
    let id: Int
    let link: Link
    let identity: PeerIdentity
    private weak var node: Node?
    private var calls: [Int: CheckedContinuation<JSONValue, any Error>] = [:]
    private var nextCallID = 0
    private var isOver = false
    private var endWaiters: [CheckedContinuation<Void, Never>] = []

    init(id: Int, link: Link, node: Node) {
        self.id = id
        self.link = link
        self.identity = link.peer
        self.node = node
    }

    /// Starts reading messages and sending heartbeats.
    func run() {
        guard let node else { return }
        let link = self.link
        node.spawn { [weak self] in
            do {
                for try await message in link.messages {
                    guard let self, let node = self.node else { break }
                    node.handle(message, from: self)
                }
            } catch {
                self?.node?.logger.info("link to \(link.peer.name) failed: \(error)")
            }
            self?.finish()
        }
        let interval = node.configuration.heartbeatInterval
        let timeout = node.configuration.heartbeatTimeout
        node.spawn { [weak self] in
            var sequence = 0
            while let self, !self.isOver {
                if ContinuousClock.now - link.lastHeard > timeout {
                    link.close(reason: "no heartbeat from \(link.peer.name) for \(timeout)")
                    break
                }
                sequence += 1
                self.send(.ping(id: sequence))
                try? await Task.sleep(for: interval)
            }
        }
    }

    private func finish() {
        guard !isOver else { return }
        isOver = true
        link.close()
        node?.sessionEnded(self)
        failCalls()
        let waiters = endWaiters
        endWaiters.removeAll()
        for waiter in waiters { waiter.resume() }
    }

    /// Waits until the link is over.
    func ended() async {
        guard !isOver else { return }
        await withCheckedContinuation { endWaiters.append($0) }
    }

    /// Sends a message; a link that cannot take it is closed (its session then ends).
    func send(_ message: WireMessage) {
        do {
            try link.enqueue(message)
        } catch {
            link.close(reason: "cannot send to \(identity.name): \(error)")
        }
    }

    /// Sends a call and waits for its answer, at most `timeout`.
    ///
    /// - Throws: `RemoteCallError` (`withdrawn` when the link goes, `timeout`, or the provider's error).
    func call(service: String, realm: String?, method: String, arguments: JSONObject, timeout: Duration) async throws -> JSONValue {
        guard !isOver else { throw RemoteCallError(.withdrawn, "the link to \(identity.name) is down") }
        nextCallID += 1
        let id = nextCallID
        let timer = Task { [weak self] in
            try? await Task.sleep(for: timeout)
            guard !Task.isCancelled else { return }
            self?.resolve(id, .failure(RemoteCallError(.timeout, "\(service).\(method) on \(self?.identity.name ?? "?"): no answer within \(timeout)")))
        }
        defer { timer.cancel() }
        node?.logger.debug("calling \(service).\(method) on \(identity.name) (call \(id))", fields: [("CORDIS_PEER", identity.name)])
        return try await withCheckedThrowingContinuation { continuation in
            calls[id] = continuation
            send(.call(RemoteCall(id: id, service: service, realm: realm, method: method, args: arguments)))
        }
    }

    /// Completes a call with a `result` or `error` message.
    func complete(_ message: WireMessage) {
        switch message {
        case .result(let result):
            resolve(result.id, .success(result.value))
        case .error(let error):
            guard let id = error.id else { return }
            resolve(id, .failure(RemoteCallError(RemoteCallError.Code(rawValue: error.code), error.message)))
        default:
            break
        }
    }

    private func resolve(_ id: Int, _ outcome: Result<JSONValue, any Error>) {
        calls.removeValue(forKey: id)?.resume(with: outcome)
    }

    /// Fails every waiting call with `withdrawn`.
    func failCalls() {
        let waiting = calls
        calls.removeAll()
        for continuation in waiting.values {
            continuation.resume(throwing: RemoteCallError(.withdrawn, "the link to \(identity.name) was lost"))
        }
    }
}
