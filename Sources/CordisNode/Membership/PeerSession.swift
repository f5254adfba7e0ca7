import Cordis
import CordisWire

/// One established link to a member (or a console), with the calls waiting for its answers.
@CordisActor
final class PeerSession {
    let id: Int
    let link: Link
    let identity: PeerIdentity
    private weak var node: Node?
    /// Calls waiting for this peer's answers: bounded, timed, failed at once when the link goes.
    let calls: PendingCalls
    /// Calls from this peer being served here: bounded, answered with `overloaded` past the bound.
    let inbound = InboundCallLimit()
    private var isOver = false
    private var endWaiters: [CheckedContinuation<Void, Never>] = []

    init(id: Int, link: Link, node: Node) {
        self.id = id
        self.link = link
        self.identity = link.peer
        self.node = node
        self.calls = PendingCalls(timeout: node.configuration.callTimeout, timers: node.loop)
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

    /// Sends a call and waits for its answer, at most the node's call timeout.
    ///
    /// - Throws: `RemoteCallError` (`withdrawn` when the link goes, `timeout`, `overloaded`, or the
    ///   provider's error).
    func call(service: String, realm: String?, method: String, arguments: JSONObject) async throws -> JSONValue {
        let link = self.link
        node?.logger.debug("calling \(service).\(method) on \(identity.name)", fields: [("CORDIS_PEER", identity.name)])
        do {
            return try await calls.call(CallRequest(service: service, realm: realm, method: method, args: arguments)) {
                try link.enqueue($0)
            }
        } catch let failure as CallFailure {
            throw RemoteCallError(RemoteCallError.Code(rawValue: failure.code.rawValue), failure.message)
        }
    }

    /// Completes a call with a `result` or `error` message.
    func complete(_ message: WireMessage) {
        _ = calls.receive(message)
    }

    /// Fails every waiting call with `withdrawn`.
    func failCalls() {
        calls.close(reason: "the link to \(identity.name) was lost")
    }
}
