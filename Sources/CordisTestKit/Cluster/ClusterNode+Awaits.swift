import Cordis
import CordisControl
import CordisWire
import Foundation

extension ClusterNode {
    /// The node's own status (`status` without `cluster`): its entries and fibers, proxies included.
    ///
    /// - Throws: `TestKitError` when the node cannot be reached or its answer does not decode.
    public func status() async throws -> NodeStatus {
        let answer = try await request(.status)
        guard let own = answer.objectValue?["nodes"]?.arrayValue?.first else {
            throw failure(.refused, "\(name) answered status without a node: \(answer)")
        }
        do {
            return try JSONValueDecoder().decode(NodeStatus.self, from: own)
        } catch {
            throw failure(.refused, "\(name)'s status does not decode", underlying: error)
        }
    }

    /// The members this node knows, with their health.
    ///
    /// - Throws: `TestKitError` when the node cannot be reached or its answer does not decode.
    public func members() async throws -> [MemberStatus] {
        let answer = try await request(.members)
        do {
            return try JSONValueDecoder().decode([MemberStatus].self, from: answer.objectValue?["members"] ?? .array([]))
        } catch {
            throw failure(.refused, "\(name)'s members do not decode", underlying: error)
        }
    }

    /// Reads the status until `condition` holds and returns that status; `what` names the wait in the
    /// error. The status is read again whenever the node reports a change (an event on the kit's link),
    /// and at least every 250 ms, at most until `deadline` (the cluster's `defaultDeadline` when nil).
    ///
    /// - Throws: `TestKitError` `.timeout` with the last status seen and every node's log.
    public func awaitStatus(
        _ what: String, within deadline: Duration? = nil, _ condition: @Sendable (NodeStatus) -> Bool
    ) async throws -> NodeStatus {
        try await poll(what, within: deadline, read: { try await self.status() }, condition)
    }

    /// Waits until entry `entry`'s fiber on this node is in `state` and returns that fiber's status.
    ///
    /// - Throws: `TestKitError` `.timeout` (with the fiber's last state, what it missed, and the logs).
    @discardableResult
    public func awaitFiber(_ entry: String, _ state: FiberState, within deadline: Duration? = nil) async throws -> FiberStatus {
        let status = try await awaitStatus("entry \(entry) \(state)", within: deadline) { status in
            status.fibers.contains { $0.entry == entry && $0.state == state.rawValue }
        }
        // The condition found it in this very status.
        return status.fibers.first { $0.entry == entry && $0.state == state.rawValue }!
    }

    /// Waits until a fiber on this node provides `service` (in `realm`, nil for the root realm) and is
    /// active: a local provider, or the proxy of a provider on another node (then `from` may name that
    /// node). Returns the providing fiber.
    ///
    /// - Throws: `TestKitError` `.timeout` with the logs.
    @discardableResult
    public func awaitService(
        _ service: String, realm: String? = nil, from origin: String? = nil, within deadline: Duration? = nil
    ) async throws -> FiberStatus {
        let what = "service \(service)" + (realm.map { " in realm \($0)" } ?? "") + (origin.map { " from \($0)" } ?? "")
        @Sendable func provider(_ status: NodeStatus) -> FiberStatus? {
            status.fibers.first { fiber in
                fiber.state == FiberState.active.rawValue
                    && fiber.provides.contains { $0.service == service && $0.realm == realm }
                    && (origin == nil || (origin == status.name ? !fiber.plugin.hasPrefix("remote:") : fiber.plugin == "remote:\(service)"))
            }
        }
        let status = try await awaitStatus(what, within: deadline) { provider($0) != nil }
        return provider(status)!
    }

    /// Waits until a fiber on this node provides `Key`'s service (see `awaitService(_:realm:from:within:)`).
    @discardableResult
    public func awaitService<Key: ServiceKey>(
        _ key: Key.Type, realm: String? = nil, from origin: String? = nil, within deadline: Duration? = nil
    ) async throws -> FiberStatus {
        try await awaitService(Key.name, realm: realm, from: origin, within: deadline)
    }

    /// Waits until this node sees member `member` with `health`, and returns that member.
    ///
    /// - Throws: `TestKitError` `.timeout` with the last members seen and the logs.
    @discardableResult
    public func awaitMember(_ member: String, _ health: MemberHealth, within deadline: Duration? = nil) async throws -> MemberStatus {
        let members = try await poll("member \(member) \(health)", within: deadline, read: { try await self.members() }) { list in
            list.contains { $0.name == member && $0.health == health.rawValue }
        }
        return members.first { $0.name == member && $0.health == health.rawValue }!
    }

    /// Waits until the node's log holds a line containing `fragment` (in any of its lives).
    ///
    /// - Throws: `TestKitError` `.timeout` with the logs.
    public func awaitLog(containing fragment: String, within deadline: Duration? = nil) async throws {
        let limit = deadline ?? options.defaultDeadline
        if log.contains(fragment) { return }
        guard await process.waitUntil(fragment, timeout: limit, { $0.contains(fragment) }) else {
            throw failure(.timeout, "\(name) did not log \"\(fragment)\" within \(limit)")
        }
    }

    /// Follows this node's events from now on (fiber states, entry changes, membership); start it before
    /// the action whose event the test awaits. End it with `close()`.
    ///
    /// - Throws: `TestKitError` when the node cannot be reached or refuses the subscription.
    public func events() async throws -> EventSubscription {
        let client: ControlClient
        do {
            client = try await connectConsole()
        } catch {
            throw failure(.notRunning, "cannot reach \(name) at \(address)", underlying: error)
        }
        do {
            _ = try await client.request(.subscribe, args: ["follow": true, "history": false, "cluster": false])
        } catch {
            await client.close()
            throw failure(.refused, "\(name) refused the event subscription", underlying: error)
        }
        let subscription = EventSubscription(client: client, node: name, defaultDeadline: options.defaultDeadline) { [self] code, message in
            failure(code, message)
        }
        await subscription.start()
        return subscription
    }

    /// Reads `read` until `condition` holds: again at each change the node reports, at least every 250 ms,
    /// at most until `deadline`.
    func poll<Value: Sendable>(
        _ what: String, within deadline: Duration?, read: () async throws -> Value, _ condition: (Value) -> Bool
    ) async throws -> Value {
        let limit = deadline ?? options.defaultDeadline
        let end = ContinuousClock.now + limit
        var last: Value?
        var lastError: (any Error)?
        while true {
            // Taken before the read: a change during the read makes the next wait return at once.
            let generation = changes.generation
            do {
                let value = try await read()
                if condition(value) { return value }
                last = value
            } catch let error as TestKitError where error.code == .refused || error.code == .notRunning {
                // A node that is restarting or busy answers again later; the deadline decides.
                lastError = error
            }
            guard ContinuousClock.now < end else { break }
            try Task.checkCancellation()
            await changes.wait(after: generation, until: min(end, ContinuousClock.now + .milliseconds(250)))
        }
        let seen = last.map { "\($0)" } ?? lastError.map { "no answer: \(($0 as? TestKitError)?.message ?? "\($0)")" } ?? "nothing"
        throw failure(.timeout, "\(name): \(what) did not come within \(limit); last seen: \(seen)")
    }
}
