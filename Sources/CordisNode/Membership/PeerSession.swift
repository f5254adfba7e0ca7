import Cordis
import CordisWire

/// One established link to a member or a console: it knows the peer's role, reads the link and
/// hands each message to the node, sends heartbeats on the event loop's timers, and owns the calls
/// waiting for the peer's answers and the calls from the peer being served here.
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
    /// A call being served: its task and its timeout, both nil while the call runs its first step.
    private struct Serving {
        var task: Task<Void, Never>?
        var timer: UInt64?
        var arrived = ContinuousClock.now
    }

    /// The calls being served, by id.
    private var serving: [Int: Serving] = [:]
    private var reader: Task<Void, Never>?
    private var heartbeat: UInt64?
    /// How long the peer has been silent while this node ran, from the first beat on.
    private var silence: HeartbeatSilence?
    private var sequence = 0
    /// Whether the link is over (its session ended: nothing the node keeps for it may be added again).
    private(set) var isOver = false
    private var isRunning = false
    /// Message types already logged as dropped (each is logged once per link).
    private var dropped: Set<String> = []
    /// The timer that closes a drained link at its deadline (set once `drain` ran). Whether the link is
    /// drained is `NodeState`'s (`drained`).
    private var drainTimer: UInt64?

    init(id: Int, link: Link, node: Node) {
        self.id = id
        self.link = link
        self.identity = link.peer
        self.node = node
        self.calls = PendingCalls(timeout: node.configuration.callTimeout, timers: node.loop)
        // This node calls members only; their answers resume the callers from the loop thread.
        if link.peer.role == .node { link.deliverAnswers(to: calls) }
    }

    /// The peer's role: a member node or a console.
    var role: PeerRole { identity.role }

    /// Starts reading messages and sending heartbeats; both end with the link.
    ///
    /// The reader prefers the node's event loop as its executor: the loop thread that decodes a message
    /// resumes the reader in the same turn, so a call is read, served (its provider runs until it first
    /// suspends) and answered there, with no thread hand-off. A provider that blocks the thread is
    /// covered by the loop's takeover: after `EventLoop.defaultTakeover` a standby thread runs the loop
    /// (heartbeats, other links) until the blocked job returns.
    func run() {
        guard !isRunning, !isOver else { return }
        isRunning = true
        // Silence counts while this node could have pinged: the time between the handshake and this
        // start (the actor busy, a loaded machine) counts at most as one gap between two beats. Counted
        // whole, a link that waited longer than the heartbeat timeout to be taken into use was closed at
        // its first beat, before its peer was asked anything.
        if let node {
            silence = HeartbeatSilence(
                now: .now, heard: link.lastHeard, interval: node.configuration.heartbeatInterval,
                timeout: node.configuration.heartbeatTimeout)
        }
        let session = WeakSession(self)
        reader = Task(executorPreference: node?.loop) {
            await Self.read(session)
        }
        scheduleHeartbeat()
    }

    /// A session held weakly: its reader keeps it only while it handles a message, so a session the
    /// node let go of ends its reader at the next message.
    private struct WeakSession: Sendable {
        weak var session: PeerSession?
        let link: Link

        init(_ session: PeerSession) {
            self.session = session
            self.link = session.link
        }
    }

    /// The reader: hands each message of the link to the node, then finishes the session.
    private static func read(_ weak: WeakSession) async {
        let link = weak.link
        do {
            // The reader is never cancelled: it ends when the link does.
            while let message = try await link.nextMessageUninterruptibly() {
                guard let session = weak.session, let node = session.node else { break }
                node.handle(message, from: session)
            }
        } catch {
            weak.session?.node?.logger.info("link to \(link.peer.name) failed: \(error)")
        }
        weak.session?.finish()
    }

    private func scheduleHeartbeat() {
        guard !isOver, let node else { return }
        heartbeat = node.loop.schedule(after: node.configuration.heartbeatInterval) { [weak self] in
            Task { @CordisActor in self?.beat() }
        }
    }

    private func beat() {
        guard !isOver, let node else { return }
        let timeout = node.configuration.heartbeatTimeout
        if silence?.beat(now: .now, heard: link.lastHeard) == true {
            node.logger.info("no heartbeat from \(identity.name) for \(timeout)", fields: [("CORDIS_PEER", identity.name)])
            // `NodeState` closes the link (and says what its silence means for the member).
            node.heartbeatMissed(self)
            return
        }
        sequence += 1
        send(.ping(id: sequence))
        scheduleHeartbeat()
    }

    private func finish() {
        guard !isOver else { return }
        isOver = true
        link.close()
        if let heartbeat { node?.loop.cancelTimer(heartbeat) }
        if let drainTimer { node?.loop.cancelTimer(drainTimer) }
        for (_, entry) in serving { end(entry) }
        serving.removeAll()
        inbound.reset()
        node?.sessionEnded(self)
        failCalls()
    }

    /// Sends a message. A message too large for a frame is not sent and the link stays up; a link that
    /// cannot take it otherwise (closed, a peer that does not read, a failed TLS session) is closed by
    /// the transport, and its session then ends. Returns the error, if any.
    @discardableResult
    func send(_ message: WireMessage) -> TransportError? {
        do {
            try link.enqueue(message)
            return nil
        } catch {
            return error
        }
    }

    /// Drops a message the peer may not send, logging it once per type on this link (and, across links,
    /// rate-limited: a peer that reconnects to repeat it cannot flood the log).
    func drop(_ message: WireMessage, because reason: String) {
        guard dropped.insert(message.type).inserted else { return }
        node?.throttle.log(
            .warn, kind: "droppedMessage",
            "dropped \(message.type) from \(identity.name): \(reason) (logged once per link)",
            fields: [("CORDIS_PEER", identity.name)])
    }

    // MARK: - Calls to the peer

    /// Sends a call and waits for its answer, at most the node's call timeout.
    ///
    /// The wait prefers the node's event loop as its executor: the loop thread that decodes the answer
    /// resumes the caller in the same turn, and the caller's code goes on there until it next suspends
    /// (no thread woken per call; a caller that blocks instead gets the loop taken over after
    /// `EventLoop.defaultTakeover`).
    ///
    /// - Throws: `RemoteCallError` (`withdrawn` when the link goes, `timeout`, `overloaded`,
    ///   `too-large` when the request does not fit in a frame, or the provider's error).
    func call(service: String, realm: String?, method: String, arguments: JSONObject) async throws -> JSONDocument {
        let link = self.link
        node?.logger.debug("calling \(service).\(method) on \(identity.name)", fields: [("CORDIS_PEER", identity.name)])
        let calls = self.calls
        let loop = node?.loop
        let request = CallRequest(service: service, realm: realm, method: method, args: arguments)
        do {
            let id = try calls.reserveCall { try link.enqueue($0) }
            // The cancellation handler is formed here, on `CordisActor`, so its operation runs on the
            // actor: `PendingCalls.call`'s own handler would hop off the actor and back.
            return try await withTaskCancellationHandler {
                try await withTaskExecutorPreference(loop) {
                    try await calls.answer(to: id, request: request)
                }
            } onCancel: {
                calls.callerCancelled(id)
            }
        } catch let error as TransportError where error.code == .tooLarge {
            throw RemoteCallError(.tooLarge, "the call of \(service).\(method) does not fit in a frame: \(error.message)")
        } catch let error as TransportError {
            throw RemoteCallError(.withdrawn, "the link to \(identity.name) cannot take the call: \(error.message)")
        }
    }

    // MARK: - Draining

    /// Drains the link, which no longer stands for its member (one of two links between the same lives
    /// was closed as the duplicate): nothing new is sent on it, and what the peer still sends on it is
    /// answered, so no call fails because two links met. Once no call sent on it waits for an answer and
    /// none from the peer is being served, the node hears of it (`NodeState` says whether it closes then);
    /// it closes at `deadline` at the latest.
    func drain(goodbye: String?, deadline: Duration) {
        guard !isOver, drainTimer == nil, let node else { return }
        if let goodbye { send(.goodbye(reason: goodbye, duplicate: true)) }
        run()
        // Answers end calls on the loop thread: the last one to end looks again whether the link is idle.
        calls.whenEmpty { [weak self] in
            Task { @CordisActor in self?.reportIfDrainedIdle() }
        }
        drainTimer = node.loop.schedule(after: deadline) { [weak self] in
            Task { @CordisActor in
                guard let self, !self.isOver else { return }
                self.link.close(reason: "the duplicate link to \(self.identity.name) was not closed within \(deadline)")
            }
        }
        reportIfDrainedIdle()
    }

    /// Tells the node when the drained link has nothing in flight any more: no call sent on it waits for
    /// an answer, none from the peer is being served, no relay to the peer is pending.
    func reportIfDrainedIdle() {
        guard let node, node.state.drained.contains(id), !isOver, calls.count == 0, serving.isEmpty,
              !node.control.relaysPending(to: identity.name)
        else { return }
        node.carryOut(node.state.receive(.drainedIdle(session: id)))
    }

    /// Fails every waiting call with `withdrawn`.
    func failCalls() {
        calls.close(reason: "the link to \(identity.name) was lost")
    }

    // MARK: - Calls from the peer

    /// Serves call `call` under the call timeout by running `dispatch` (a service's dispatcher) on
    /// `instance` (its provider): answers with its value or error, or `timeout`; a `cancel` from the
    /// peer ends it silently. Either way its inbound slot is freed.
    ///
    /// The dispatcher is called straight from the serving task, not through a closure around it: each
    /// async call on the way costs the call's frame and an executor check.
    func serve(
        _ call: RemoteCall, timeout: Duration,
        running dispatch: @escaping @CordisActor @Sendable (Any, String, JSONObject) async throws -> JSONValue,
        on instance: Any
    ) {
        guard let node else { return }
        if let refusal = inbound.admit(call) {
            send(refusal)
            return
        }
        let id = call.id
        let method = call.method
        let arguments = call.args
        let arrived = ContinuousClock.now
        serving[id] = Serving()
        // The call runs at once, on this actor, until it first suspends: a provider that answers
        // without suspending is answered here, with no task queued and no timer armed.
        let task = Task.immediate { @CordisActor [weak self] in
            let reply: WireMessage
            do {
                reply = .result(RemoteResult(id: id, value: try await dispatch(instance, method, arguments)))
            } catch let error as RemoteCallError {
                reply = error.reply(to: id)
            } catch is CancellationError {
                reply = RemoteCallError(.cancelled, "call \(id) was cancelled").reply(to: id)
            } catch {
                reply = RemoteCallError(.failed, "\(error)").reply(to: id)
            }
            self?.answer(id, with: reply)
        }
        guard serving[id] != nil else { return }
        // The timeout counts from the call's arrival, whatever its first step took.
        let remaining = max(.zero, timeout - (ContinuousClock.now - arrived))
        let timer = node.loop.schedule(after: remaining) { [weak self] in
            Task { @CordisActor in
                self?.answer(id, with: RemoteCallError(
                    .timeout, "\(call.service).\(call.method) did not answer within \(timeout)").reply(to: id))
            }
        }
        serving[id] = Serving(task: task, timer: timer, arrived: arrived)
    }

    /// Stops what serves a call: its task (if it suspended) and its timeout.
    private func end(_ entry: Serving) {
        entry.task?.cancel()
        if let timer = entry.timer { node?.loop.cancelTimer(timer) }
    }

    /// Sends the answer of a call being served (unless it already ended), `too-large` in place of a
    /// result that does not fit in a frame.
    private func answer(_ id: Int, with reply: WireMessage) {
        guard let entry = serving.removeValue(forKey: id) else { return }
        node?.control.metrics.served(reply, since: entry.arrived)
        end(entry)
        inbound.finish(id)
        if let error = send(reply), error.code == .tooLarge {
            send(RemoteCallError(.tooLarge, "the result of call \(id) does not fit in a frame: \(error.message)").reply(to: id))
        }
        reportIfDrainedIdle()
    }

    /// The peer gave up call `id`: its serving task is cancelled and its slot freed; nothing is sent.
    func cancelServing(_ id: Int) {
        guard let entry = serving.removeValue(forKey: id) else { return }
        end(entry)
        inbound.finish(id)
        reportIfDrainedIdle()
    }
}
