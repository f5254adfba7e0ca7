import Cordis
import CordisWire
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// The stream of changes a console can follow: every fiber's `internal/status` and the Loader's
/// `loader/entry`, stamped with the node's name and the time, pushed as `event` messages after a
/// `subscribe` request, and forwarded from the other members for cluster-wide subscribers.
extension Node {
    /// Starts recording this node's changes (called once from `start()`).
    func startEventStream() throws {
        control.operators.replace(with: configuration.security.operators)
        warnAboutClusterRole(in: configuration.security.operators)
        control.trustedKeys = configuration.security.trustedKeys
        let status = try context.on(.status) { [weak self] change in
            self?.fiberEvent(change)
        }
        let entries = try loader.ctx.on(.loaderEntry) { [weak self] change in
            self?.publish(kind: "entry", detail: ["entry": .string(change.id), "change": .string(change.kind.rawValue)])
        }
        control.eventListeners = [status, entries]
    }

    private func fiberEvent(_ change: StatusChange) {
        let fiber = change.fiber
        guard fiber.id != context.fiber.id else { return }
        var detail = JSONObject()
        detail["fiber"] = .integer(fiber.id)
        detail["entry"] = loader.entryID(for: fiber).map { .string($0) } ?? .null
        detail["plugin"] = .string(fiber.name)
        detail["from"] = .string(change.oldState.rawValue)
        detail["to"] = .string(fiber.state.rawValue)
        if let error = fiber.error, fiber.state == .failed { detail["error"] = .string("\(error)") }
        publish(kind: "status", detail: detail)
    }

    /// Records a local change and pushes it to every subscriber that wants it.
    func publish(kind: String, detail: JSONObject) {
        let event = ControlEvent(id: 0, node: name, time: Date().timeIntervalSince1970, kind: kind, detail: detail)
        control.remember(event)
        deliver(event, local: true)
    }

    /// Pushes `event` to the subscribers that want it: a local one to all, another member's (that
    /// `upstream` subscription brought) to the cluster-wide subscribers of that subscription's operator.
    private func deliver(_ event: ControlEvent, local: Bool, upstream: ControlState.Upstream? = nil) {
        for subscriber in control.subscribers where local || (subscriber.cluster && subscriber.operator == upstream?.operator) {
            if let on = subscriber.on, on != event.node { continue }
            var copy = event
            copy.id = subscriber.id
            subscriber.session.send(.event(copy))
        }
    }

    /// An event from a member this node subscribed to: forwarded to cluster-wide subscribers.
    func forwardEvent(_ event: ControlEvent, from session: PeerSession) {
        guard session.identity.role == .node,
              let upstream = control.followed.first(where: { $0.key.member == session.identity.name && $0.value == event.id })
        else { return }
        deliver(event, local: false, upstream: upstream.key)
    }

    /// `subscribe`: returns the recent events (`history`, default true), then, with `follow: true`,
    /// pushes each new one. `cluster: true` (the default for consoles) includes every member's events;
    /// `on` keeps one member's. Other members are asked for `requester`, and each checks it by its own
    /// operators file (a member that refuses it contributes nothing).
    ///
    /// - Throws: `ControlError` `rejected` past `ControlState.maximumFollows` follow-subscriptions of
    ///   one console (a member, following for each operator of its consoles, may hold more).
    func subscribe(_ request: ControlRequest, by session: PeerSession, for requester: OperatorIdentity?) async throws -> JSONValue {
        let args = request.args
        if args["follow"]?.boolValue == true {
            let held = control.subscribers.filter { $0.session === session }.count
            let limit = session.role == .node ? ControlState.maximumFollows * 16 : ControlState.maximumFollows
            guard held < limit else {
                throw ControlError("rejected", "\(session.identity.name) already follows \(held) event streams on \(name)")
            }
        }
        let cluster = session.identity.role == .console && (args["cluster"]?.boolValue ?? true)
        let on = args["on"]?.stringValue
        var events: [ControlEvent] = []
        if args["history"]?.boolValue ?? true {
            if on == nil || on == name { events = control.history }
            if cluster {
                let timeout = relayTimeout(for: request)
                let members = state.membership.linkedNames.filter { on == nil || $0 == on }
                for member in members {
                    var question = ControlRequest(id: 0, command: "subscribe", args: ["follow": false, "cluster": false])
                    question.operator = requester?.relayed
                    guard let answer = try? await ask(member, question, timeout: timeout) else { continue }
                    // A member's malformed record is left out, as a missing answer is.
                    events += (answer["events"]?.arrayValue ?? []).compactMap { record in
                        (try? JSONValueDecoder().decode(EventRecord.self, from: record))?.event()
                    }
                }
                events.sort { $0.time < $1.time }
            }
        }
        if args["follow"]?.boolValue == true {
            // The request ran while its link stayed open: one that closed meanwhile (its session's
            // subscriptions already ended) gets no subscriber that nothing would remove.
            guard !session.isOver else {
                throw ControlError("closed", "the link of \(session.identity.name) closed before the subscription started")
            }
            control.subscribers.append(
                ControlState.Subscriber(session: session, id: request.id, cluster: cluster, on: on, operator: requester))
            if cluster {
                for member in sessions.values { subscribeUpstream(member, for: requester) }
            }
        }
        return .object(["events": try JSONValueEncoder().encode(events.map(EventRecord.init))])
    }

    /// `unsubscribe`: stops the stream of subscription `id` (the `subscribe` request's id).
    func unsubscribe(_ request: ControlRequest, by session: PeerSession) -> JSONValue {
        let id = request.args["id"]?.intValue
        control.subscribers.removeAll { $0.session === session && (id == nil || $0.id == id) }
        endUnusedUpstream()
        return .object(["unsubscribed": .bool(true)])
    }

    /// Ends each subscription to another member once no cluster-wide subscriber of its operator is left.
    func endUnusedUpstream() {
        guard !control.followed.isEmpty else { return }
        let following = Set(control.subscribers.filter(\.cluster).map(\.operator))
        for (upstream, id) in control.followed where !following.contains(upstream.operator) {
            control.followed[upstream] = nil
            control.nextRelayID += 1
            link(to: upstream.member)?.send(.request(ControlRequest(
                id: control.nextRelayID, command: "unsubscribe", args: ["id": .integer(id)])))
        }
    }

    /// A member linked: when a console follows the whole cluster, follow that member too; a forgotten
    /// member that comes back is known again.
    func controlLinked(_ session: PeerSession) {
        guard session.identity.role == .node else { return }
        for requester in Set(control.subscribers.filter(\.cluster).map(\.operator)) {
            subscribeUpstream(session, for: requester)
        }
    }

    /// Follows `session`'s member for the cluster-wide subscribers of `requester`, once.
    private func subscribeUpstream(_ session: PeerSession, for requester: OperatorIdentity?) {
        let upstream = ControlState.Upstream(member: session.identity.name, operator: requester)
        guard control.followed[upstream] == nil else { return }
        control.nextRelayID += 1
        let id = control.nextRelayID
        control.followed[upstream] = id
        var request = ControlRequest(id: id, command: "subscribe", args: ["follow": true, "history": false, "cluster": false])
        request.operator = requester?.relayed
        session.send(.request(request))
    }
}
