import Cordis
import CordisWire
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// The stream of changes a console can follow: every fiber's `internal/status`, the Loader's
/// `loader/entry`, the audited changes and the membership changes this node sees (`member`), stamped
/// with the node's name and the time, pushed as `event` messages after a `subscribe` request, and
/// forwarded from the other members for cluster-wide subscribers.
extension ControlServer {
    /// Starts recording this node's changes (called once from `start()`).
    func startEventStream() throws {
        operators.replace(with: node.configuration.security.operators)
        warnAboutClusterRole(in: node.configuration.security.operators)
        trustedKeys = node.configuration.security.trustedKeys
        let status = try node.context.on(StatusEvent.self) { [weak node] change in
            node?.control.fiberEvent(change)
        }
        let entries = try node.loader.ctx.on(LoaderEntryEvent.self) { [weak node] change in
            node?.control.publish(kind: "entry", detail: ["entry": .string(change.id), "change": .string(change.kind.rawValue)])
        }
        eventListeners = [status, entries]
        watchMemberHealth(every: node.configuration.heartbeatInterval)
    }

    private func fiberEvent(_ change: StatusEvent.Args) {
        let fiber = change.fiber
        guard fiber.id != node.context.fiber.id else { return }
        var detail = JSONObject()
        detail["fiber"] = .integer(fiber.id)
        detail["entry"] = node.loader.entryID(for: fiber).map { .string($0) } ?? .null
        detail["plugin"] = .string(fiber.name)
        detail["from"] = .string(change.oldState.rawValue)
        detail["to"] = .string(fiber.state.rawValue)
        if let error = fiber.error, fiber.state == .failed { detail["error"] = .string("\(error)") }
        publish(kind: "status", detail: detail)
    }

    /// Records a local change and pushes it to every subscriber that wants it.
    func publish(kind: String, detail: JSONObject) {
        let event = ControlEvent(id: 0, node: node.name, time: Date().timeIntervalSince1970, kind: kind, detail: detail)
        remember(event)
        deliver(event, upstream: nil)
    }

    /// Pushes `event` to the subscribers that want it: a local one to all, another member's (that
    /// `upstream` subscription brought) to the cluster-wide subscribers of that subscription's operator.
    ///
    /// The event is encoded once; the copies for one link (one per subscription) leave in one write. A
    /// console that leaves too much unread (`Admission.delivery`) gets no copy: its subscriptions end
    /// with a `lagged` event, or its link is closed.
    private func deliver(_ event: ControlEvent, upstream: Subscriptions.Upstream?) {
        var batches: [Int: (session: PeerSession, ids: [Int])] = [:]
        var order: [Int] = []
        var lagging: [Int: (session: PeerSession, reason: String)] = [:]
        for subscriber in node.state.subscriptions.recipients(ofEventOn: event.node, upstream: upstream) {
            let key = subscriber.session
            if batches[key] == nil {
                guard lagging[key] == nil, let session = node.session(key) else { continue }
                switch node.state.admission.delivery(to: key, backlog: session.link.backlog, event: true) {
                case .send: break
                case .lag(let reason):
                    lagging[key] = (session, reason)
                    continue
                case .close(let reason):
                    node.closeUnread(session, reason)
                    lagging[key] = (session, reason)
                    continue
                }
                batches[key] = (session, [])
                order.append(key)
            }
            batches[key]?.ids.append(subscriber.id)
        }
        if !order.isEmpty {
            let shared = SharedEvent(event)
            for key in order {
                guard let batch = batches[key] else { continue }
                do {
                    try batch.session.link.enqueue(shared, ids: batch.ids)
                } catch where error.code != .tooLarge {
                    batch.session.link.close(reason: "cannot send to \(batch.session.identity.name): \(error)")
                } catch {}
            }
        }
        for (session, reason) in lagging.values where !session.link.connection.isClosed {
            endSubscriptions(of: session, because: reason)
        }
    }

    /// Ends every follow subscription of `session`, telling it with a `lagged` event on each (its link
    /// stays open: the console may subscribe again once it has read what waits).
    private func endSubscriptions(of session: PeerSession, because reason: String) {
        let ended = node.state.subscriptions.subscribers.filter { $0.session == session.id }.map(\.id)
        node.carryOut(node.state.receive(.subscriptionsLagged(session: session.id)))
        node.throttle.log(.info, kind: "subscriberLagged", "ended \(ended.count) subscriptions of \(session.identity.name): \(reason)",
                     fields: [("CORDIS_PEER", session.identity.name)])
        let notice = ControlEvent(
            id: 0, node: node.name, time: Date().timeIntervalSince1970, kind: "lagged",
            detail: ["reason": .string(reason), "waiting": .integer(session.link.backlog)])
        try? session.link.enqueue(SharedEvent(notice), ids: ended)
    }

    /// An event from a member this node subscribed to: forwarded to cluster-wide subscribers.
    func forwardEvent(_ event: ControlEvent, from session: PeerSession) {
        guard session.identity.role == .node,
              let upstream = node.state.subscriptions.follows(session.identity.name, id: event.id)
        else { return }
        deliver(event, upstream: upstream)
    }

    /// `subscribe`: returns the recent events (`history`, default true), then, with `follow: true`,
    /// pushes each new one. `cluster: true` (the default for consoles) includes every member's events;
    /// `on` keeps one member's. Other members are asked for `requester`, and each checks it by its own
    /// operators file (a member that refuses it contributes nothing).
    ///
    /// - Throws: `ControlError` `rejected` past the follow subscriptions `Admission` allows one link and
    ///   one console identity (a member, following for each operator of its consoles, may hold more).
    func subscribe(_ request: ControlRequest, by session: PeerSession, for requester: OperatorIdentity?) async throws -> JSONValue {
        let args = request.args
        if args["follow"]?.boolValue == true {
            if case .refuse(let reason) = node.state.mayFollow(session: session.id) {
                throw ControlError("rejected", "\(node.name) starts no more subscriptions of \(session.identity.name): \(reason)")
            }
        }
        let cluster = node.state.followsCluster(session: session.id, asks: args["cluster"]?.boolValue ?? true)
        let on = args["on"]?.stringValue
        if let on, on != node.name, !isKnownMember(on) {
            throw ControlError("unknown-member", "\(node.name) knows no member named \(on) (members lists the ones it knows)")
        }
        var events: [ControlEvent] = []
        if args["history"]?.boolValue ?? true {
            if on == nil || on == node.name { events = history }
            if cluster {
                let timeout = relayTimeout(for: request)
                let members = node.state.membership.linkedNames.filter { on == nil || $0 == on }
                for member in members {
                    var question = ControlRequest(id: 0, command: .subscribe, args: ["follow": false, "cluster": false])
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
            node.carryOut(node.state.receive(.subscribed(
                Subscriptions.Subscriber(session: session.id, id: request.id, cluster: cluster, on: on, operator: requester))))
        }
        return .object(["events": try JSONValueEncoder().encode(events.map(EventRecord.init))])
    }

    /// Whether `member` is a member this node knows and has not forgotten (`NodeState.knownMembers`).
    func isKnownMember(_ member: String) -> Bool {
        node.state.knownMembers.contains(member)
    }

    /// `unsubscribe`: stops the stream of subscription `id` (the `subscribe` request's id).
    func unsubscribe(_ request: ControlRequest, by session: PeerSession) -> JSONValue {
        node.carryOut(node.state.receive(.unsubscribed(session: session.id, id: request.args["id"]?.intValue)))
        return .object(["unsubscribed": .bool(true)])
    }

    /// Subscribes, as `id`, to the events of the member on `session`, for the cluster-wide subscribers
    /// of `requester` (as `NodeState` said).
    func followEvents(on session: PeerSession, id: Int, for requester: OperatorIdentity?) {
        var request = ControlRequest(id: id, command: .subscribe, args: ["follow": true, "history": false, "cluster": false])
        request.operator = requester?.relayed
        session.send(.request(request))
    }

    /// Ends subscription `id` to the events of the member on `session`, with the request `request`.
    func unfollowEvents(on session: PeerSession, id: Int, request: Int) {
        session.send(.request(ControlRequest(id: request, command: .unsubscribe, args: ["id": .integer(id)])))
    }
}
