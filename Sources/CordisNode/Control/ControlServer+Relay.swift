import Cordis
import CordisWire
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// Relaying: the node a console reaches forwards requests for other members over its own links, and
/// collects every member's status for `status` with `cluster: true`.
extension ControlServer {
    /// How long a relay may wait, from the request's own timeout: most of it, so the answer (or
    /// `unreachable`) still reaches the console in time.
    /// The request's timeout comes from the socket: it is clamped (`ControlTimeout.clamped`), never
    /// converted unchecked.
    func relayTimeout(for request: ControlRequest) -> Duration {
        ControlTimeout.clamped((request.timeout ?? ControlTimeout.defaultSeconds) * 0.8)
    }

    /// Runs `request` on `member` over the link to it and returns its (joined) result.
    ///
    /// - Throws: `ControlError` `unreachable` when there is no link to the member or it does not answer
    ///   within `timeout`; the member's own error otherwise.
    func ask(_ member: String, _ request: ControlRequest, timeout: Duration) async throws -> JSONValue {
        // The link in use; else what `NodeState.linkChoice` says: the link opened on demand (etcd mode, closed
        // again when idle), or the replacement of one closed as a duplicate.
        guard let session = await node.openLink(to: member) else {
            let known = isKnownMember(member)
            throw ControlError(
                known ? "unreachable" : "unknown-member",
                known ? "\(node.name) has no link to \(member)" : "no member is named \(member)")
        }
        let id = node.state.newRequestID()
        // Every relay ends by its deadline: the loop's timer fails it unless the answer came first.
        let timer = node.loop.schedule(after: timeout) { [weak self] in
            Task { @CordisActor in
                self?.failRelay(id, ControlError("unreachable", "\(member) did not answer within \(timeout)"))
            }
        }
        defer { node.loop.cancelTimer(timer) }
        return try await withCheckedThrowingContinuation { continuation in
            relays[id] = Relay(member: member, continuation: continuation)
            var forwarded = request
            forwarded.id = id
            forwarded.node = nil
            forwarded.timeout = ControlTimeout.seconds(timeout)
            session.send(.request(forwarded))
        }
    }

    /// Whether a request relayed to `member` waits for its answer.
    func relaysPending(to member: String) -> Bool {
        relays.values.contains { $0.member == member }
    }

    /// A member's answer to a relayed request: a page is kept, the last one completes the relay.
    func completeRelay(_ response: ControlResponse, from session: PeerSession) {
        guard var relay = relays[response.id], relay.member == session.identity.name else { return }
        if let code = response.errorCode {
            failRelay(response.id, ControlError(code, response.errorMessage ?? code))
            return
        }
        let result = response.result ?? .null
        if response.more {
            relay.pages.append(result)
            relays[response.id] = relay
            return
        }
        relays[response.id] = nil
        relay.continuation.resume(returning: relay.pages.isEmpty ? result : .array(relay.pages + [result]))
    }

    /// Ends relay `id` (if it still waits) with `error`.
    func failRelay(_ id: Int, _ error: any Error) {
        relays.removeValue(forKey: id)?.continuation.resume(throwing: error)
    }

    /// The link in use to a member, or a console's link, ended: the relays to the member fail as
    /// unreachable, then what the link itself held ends.
    func sessionEnded(_ session: PeerSession) {
        let member = session.identity.name
        if session.identity.role == .node {
            for (id, relay) in relays where relay.member == member {
                failRelay(id, ControlError("unreachable", "the link to \(member) was lost"))
            }
            lastHeard[member] = max(lastHeard[member] ?? session.link.lastHeard, session.link.lastHeard)
        }
        linkClosed(session)
    }

    /// A link ended, whichever it was (a standby or a drained duplicate too, while the member stays
    /// linked): its proven operator goes (its subscriptions and requests stop counting in `NodeState`).
    func linkClosed(_ session: PeerSession) {
        operatorOfSession[session.id] = nil
    }

    /// A member's answer to `question`, or why there is none.
    private func answer(of member: String, to question: ControlRequest, timeout: Duration) async -> Result<JSONValue, ControlError> {
        do {
            return .success(try await ask(member, question, timeout: timeout))
        } catch let error as ControlError {
            return .failure(error)
        } catch {
            return .failure(ControlError("unreachable", "\(error)"))
        }
    }

    /// `status`: this node's snapshot, or with `cluster: true` every member's, unreachable ones with
    /// `reachable: false` and the last snapshot seen. Each member is asked for `requester` and checks
    /// it by its own operators file: a member that refuses it shows only as refused, nothing of it. A
    /// member `suspected` (silent past half the heartbeat timeout: frozen, or its link stalled) is not
    /// asked, so the answer does not wait for it: its last snapshot is shown unreachable. With
    /// `on` as well, only that member is asked and listed (`unknown-member` when this node knows none by
    /// that name). Every node listed carries its `health` as this node sees it.
    func status(_ request: ControlRequest, by requester: OperatorIdentity?) async throws -> JSONValue {
        let own = try node.statusSnapshot()
        lastStatus[node.name] = own
        // Each member's health, as `members` says it: one reading for the whole answer.
        let health = node.memberHealth()
        func withHealth(_ snapshot: JSONValue, of member: String) -> JSONValue {
            guard case .object(var object) = snapshot, let state = health[member] else { return snapshot }
            object["health"] = .string(state.rawValue)
            return .object(object)
        }
        let only = request.args["on"]?.stringValue
        guard request.args["cluster"]?.boolValue == true, only != node.name else {
            return .object(["nodes": .array([withHealth(own, of: node.name)])])
        }
        var members = node.state.knownMembers.sorted()
        if let only {
            guard members.contains(only) else {
                throw ControlError("unknown-member", "\(node.name) knows no member named \(only) (members lists the ones it knows)")
            }
            members = [only]
        }
        let timeout = relayTimeout(for: request)
        let question = ControlRequest(id: 0, command: .status, operator: requester?.relayed)
        let silent = Set(members.filter { health[$0] == .suspected })
        // Every member is asked at once, each question a child of this request's task.
        let answers = await withTaskGroup(of: (String, Result<JSONValue, ControlError>).self) { group in
            for member in members where !silent.contains(member) {
                group.addTask { (member, await self.answer(of: member, to: question, timeout: timeout)) }
            }
            var answers: [String: Result<JSONValue, ControlError>] = [:]
            for await (member, answer) in group { answers[member] = answer }
            return answers
        }
        var nodes: [JSONValue] = [own]
        for member in members {
            if silent.contains(member) {
                let heard = lastSeen(member).map { " for \(($0 * 10).rounded() / 10) s" } ?? ""
                nodes.append(try unreachableStatus(
                    member, reason: "\(member) is suspected: silent\(heard), past half the heartbeat timeout; not asked"))
                continue
            }
            switch answers[member] {
            case .success(let value):
                let joined = StatusPaging.join(value)
                if let snapshot = joined["nodes"]?.arrayValue?.first(where: { $0["name"]?.stringValue == member }) {
                    lastStatus[member] = snapshot
                    lastHeard[member] = .now
                    nodes.append(snapshot)
                    continue
                }
                nodes.append(try unreachableStatus(member, reason: "\(member) sent no status"))
            case .failure(let error) where error.code == "forbidden":
                nodes.append(try refusedStatus(member, reason: error.message))
            case .failure(let error):
                nodes.append(try unreachableStatus(member, reason: error.message))
            case nil:
                nodes.append(try unreachableStatus(member, reason: "no answer"))
            }
        }
        if only != nil { nodes.removeFirst() }
        return .object(["nodes": .array(zip(nodes, (only == nil ? [node.name] : []) + members).map { withHealth($0, of: $1) })])
    }

    /// A member that could not be asked: the last snapshot seen, marked unreachable, with the reason.
    func unreachableStatus(_ member: String, reason: String) throws -> JSONValue {
        // A last snapshot that does not decode is replaced by what the membership knows.
        let last = lastStatus[member].flatMap { try? JSONValueDecoder().decode(NodeStatus.self, from: $0) }
        var status = last ?? NodeStatus(
            name: member, addresses: node.memberAddresses[member] ?? [], incarnation: node.memberIncarnations[member],
            version: nil, reachable: false, entries: [], fibers: [])
        status.reachable = false
        status.unreachable = reason
        status.lastSeen = lastSeen(member)
        return try JSONValueEncoder().encode(status)
    }

    /// Seconds since `member` was last heard from: its link's last frame while it is linked, else the
    /// last one before its link ended or its last status answer, whichever came later; nil if never.
    func lastSeen(_ member: String) -> Double? {
        let heard = [node.link(to: member)?.link.lastHeard, lastHeard[member]].compactMap { $0 }.max()
        guard let heard else { return nil }
        return max(0, NodeMetrics.seconds(since: heard))
    }

    /// A member that refused the operator: its name and nothing it would not show that operator
    /// (not the last snapshot another operator saw), marked unreachable with its reason.
    func refusedStatus(_ member: String, reason: String) throws -> JSONValue {
        var status = NodeStatus(
            name: member, addresses: [], incarnation: nil, version: nil, reachable: false, entries: [], fibers: [])
        status.unreachable = reason
        return try JSONValueEncoder().encode(status)
    }

    /// Sends a response, in pages under the link's frame limit (the peer's when it is smaller) when the
    /// result is a large status.
    func sendPaged(_ response: ControlResponse, to session: PeerSession) {
        guard let result = response.result else {
            node.send(.response(response), to: session)
            return
        }
        let frame = session.link.sendLimit
        let budget = max(frame / 2, frame - 1024)
        let pages = StatusPaging.pages(of: result, budget: budget)
        for (index, page) in pages.enumerated() {
            guard node.send(.response(ControlResponse(id: response.id, result: page, more: index < pages.count - 1)), to: session)
            else { return }
        }
    }
}
