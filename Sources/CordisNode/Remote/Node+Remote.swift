import Cordis
import CordisWire

/// Remote services: exporting local providers (through `Exports`), proxies for remote ones, serving
/// calls.
extension Node {
    // MARK: - Exports

    /// Tells `Exports` which local provider lives should be shared now: every ordinary, available
    /// provider of a remote-capable service outside a private realm. Called once at start; afterwards
    /// each change of the service registry reconciles its own slot (`refreshExports(in:)`).
    func refreshExports() {
        guard running else { return }
        exportsChanged(.available(context.allProviderRecords.compactMap { record in
            shareable(record.slot).flatMap { exportable(record, service: $0.service, realm: $0.realm) }
        }))
    }

    /// Reconciles the exports of one slot after the registry changed it: a provider is announced however
    /// it appears (a fiber becoming active, or an active one providing) and withdrawn however it leaves
    /// (its fiber unloading, its handle disposed, its `check` failing). Every such change moves the
    /// slot's current provider, so the registry reports it for that slot alone, and the cost of a change
    /// does not grow with the number of providers.
    func refreshExports(in slot: ServiceSlot) {
        guard running, let (service, realm) = shareable(slot) else { return }
        // Nothing to share (the slot's current provider is a fallback, a proxy, or there is none: no
        // ordinary provider is available) and nothing of it shared: nothing changes (a proxy leaving, say).
        if context.currentProvider(of: slot.name, in: slot.realm).map({ $0.isFallback }) ?? true,
           !state.exports.exportsAny(of: slot.name, in: realm) {
            return
        }
        let available = context.registeredProviders(in: slot).compactMap { exportable($0, service: service, realm: realm) }
        exportsChanged(.slotChanged(service: slot.name, realm: realm, available: available))
    }

    /// The catalog entry of `slot`'s service and the slot's realm as announced, when the slot's providers
    /// may be shared at all (`Exports.announcedRealm(of:remoteCapable:)`); nil when none ever is.
    private func shareable(_ slot: ServiceSlot) -> (service: RemoteServiceCatalog.Service, realm: String?)? {
        let service = remoteServices.service(named: slot.name)
        guard let realm = Exports.announcedRealm(of: slot.realm, remoteCapable: service != nil), let service else { return nil }
        return (service, realm)
    }

    /// Whether the node shares its exports now: always in the mesh; in etcd mode, not while its lease
    /// has certainly expired.
    var sharesExports: Bool { etcd?.exportsWithdrawn != true }

    /// The announcement of `record` when `Exports.shares` says it is shared now; a record seen for the
    /// first time is remembered (its fiber holds withdrawals). `service` is the record's service in the
    /// catalog and `realm` its slot's realm as announced (`Exports.announcedRealm(of:remoteCapable:)`).
    private func exportable(
        _ record: ProviderRecord, service: RemoteServiceCatalog.Service, realm: String?
    ) -> ServiceAnnouncement? {
        guard Exports.shares(isFallback: record.isFallback, isAvailable: record.isAvailable, sharing: sharesExports)
        else { return nil }
        if state.exports.export(life: record.id) == nil, !state.exports.isStopping {
            remote.records[record.id] = record
            logger.info("providing \(service.name) to the cluster", fields: [("CORDIS_FIBER", "\(record.fiber.id)")])
        }
        return ServiceAnnouncement(
            service: service.name, realm: realm, interface: service.interface, interfaceVersion: service.version,
            node: name, fiber: record.fiber.id, life: record.id)
    }

    /// Tells `NodeState` what changed in the exports and carries out what it decided.
    func exportsChanged(_ event: Exports.Event) {
        carryOut(state.receive(.exports(event)), exportsChanged: true)
    }

    /// Carries out what `Exports` decided.
    func carryOut(_ directive: Exports.Directive) {
        switch directive {
        case .hold(let provider):
            remote.holds[provider.life] = remote.records[provider.life]?.fiber.holdWithdrawal("remote consumers of \(provider.service)")
        case .announce(let announcement, let peers):
            for peer in peers { link(to: peer)?.send(.announce(announcement)) }
        case .withdraw(let provider, let peers):
            // In etcd mode `NodeState` says this once the key is deleted (see `ServiceKeys`).
            for peer in peers { link(to: peer)?.send(.withdraw(provider)) }
        case .armDeadline(let life, let delay):
            // Armed as the withdrawal begins (its peers may be told later, once its etcd key is gone).
            control.metrics.withdrawalStarted(life: life)
            let loop = self.loop
            let replaced = remote.deadlines.arm(life: life) { number in
                loop.schedule(after: delay) { [weak self] in
                    Task { @CordisActor in
                        // Cancelled or armed again since the timer fired: it does not pass.
                        guard let self, self.remote.deadlines.fired(life: life, number: number) else { return }
                        self.exportsChanged(.deadlinePassed(life: life))
                    }
                }
            }
            if let replaced { loop.cancelTimer(replaced) }
        case .cancelDeadline(let life):
            if let timer = remote.deadlines.cancel(life: life) { loop.cancelTimer(timer) }
        case .release(let provider, let outcome):
            let life = provider.life
            switch outcome {
            case .finished(let acknowledged, let lost):
                var text = "acknowledged by \(acknowledged)"
                if !lost.isEmpty { text += ", links lost to \(lost)" }
                logger.info(
                    "withdrawal of \(provider.service) finished: \(text)", fields: [("CORDIS_FIBER", "\(provider.fiber)")])
            case .timedOut(let awaiting, _):
                logger.warn("withdrawal of \(provider.service) went ahead without acknowledgements from \(awaiting)")
            case .noPeers:
                break
            }
            control.metrics.withdrawalEnded(life: life, outcome: outcome)
            // The life is no longer exported: its record goes, and its teardown may run.
            remote.records[life] = nil
            remote.holds.removeValue(forKey: life)?.release()
        }
    }

    /// After the exports changed: the etcd keys follow the exports, and callers waiting for the withdrawals
    /// to end go on once none is left.
    func exportsSettled() {
        etcd?.publishExports()
        if !state.exports.isWithdrawing {
            let waiters = remote.waiters
            remote.waiters.removeAll()
            for waiter in waiters { waiter.resume() }
        }
    }

    /// Returns once no withdrawal is in progress.
    func withdrawalsFinished() async {
        guard state.exports.isWithdrawing else { return }
        await withCheckedContinuation { remote.waiters.append($0) }
    }

    // MARK: - Proxies

    /// Carries out what `Proxies` decided: a proxy fiber provides a member's service here as a fallback
    /// ranked by the member's name; a disposed proxy's end is reported back once its consumers unloaded
    /// (`Proxies` acknowledges a withdrawal then); an acknowledgement goes on the session it names.
    func carryOut(_ directive: Proxies.Directive) {
        switch directive {
        case .create(let key, let announcement, let rank):
            createProxy(key, for: announcement, rank: rank)
        case .mismatch(let key, let reason):
            logger.warn("interface mismatch: \(reason)", fields: [("CORDIS_PEER", key.node)])
        case .dispose(let key, let id, let why):
            // Every proxy `Proxies` disposes was created (one that could not be is `notCreated`); the
            // disposal still ends if its fiber is gone, so no acknowledgement waits for ever.
            guard let fiber = remote.proxies.removeValue(forKey: key) else {
                return carryOut(state.receive(.proxyDisposed(id)))
            }
            if why == .retracted {
                // Whoever writes to etcd can list and delete providers at will: rate-limited.
                throttle.log(
                    .info, kind: "etcdRetracted", "\(key.service) on \(key.node) is no longer listed in etcd",
                    fields: [("CORDIS_PEER", key.node)])
            }
            activity.start { [weak self] in
                try? await fiber.dispose()
                guard let self else { return }
                self.carryOut(self.state.receive(.proxyDisposed(id)))
            }
        case .acknowledge(let owed):
            let provider = owed.provider
            logger.info(
                "acknowledged the withdrawal of \(provider.service) on \(provider.node)", fields: [("CORDIS_PEER", provider.node)])
            peers[owed.session]?.send(.withdrawAck(provider))
        }
    }

    private func createProxy(_ key: Proxies.Key, for announcement: ServiceAnnouncement, rank: String) {
        guard let service = remoteServices.service(named: announcement.service) else {
            return carryOut(state.receive(.proxies(.notCreated(key))))
        }
        let realm: Realm = announcement.realm.map { .label($0) } ?? .root
        let endpoint = NodeEndpoint(
            node: self, peer: key.node, incarnation: key.incarnation, service: announcement.service,
            realm: announcement.realm)
        let proxy = service.makeProxy(endpoint)
        do {
            remote.proxies[key] = try context.isolate(announcement.service, realm: realm).function(name: "remote:\(announcement.service)") { scope in
                try scope.ctx.provide(name: announcement.service, value: proxy, fallbackRank: rank)
            }
        } catch {
            // Tried again at each announcement of the provider: rate-limited.
            throttle.log(
                .error, kind: "proxyNotCreated",
                "cannot create a proxy for \(announcement.service) on \(announcement.node): \(error)",
                fields: [("CORDIS_PEER", announcement.node)])
            carryOut(state.receive(.proxies(.notCreated(key))))
        }
    }

    // MARK: - Calls

    /// Runs a call on the local provider of its service and realm, and answers it: under the call
    /// timeout, cancelled by the caller's `cancel`, `too-large` for a result that does not fit.
    func serve(_ call: RemoteCall, from session: PeerSession) {
        let realm: Realm = call.realm.map { .label($0) } ?? .root
        guard let service = remoteServices.service(named: call.service) else {
            session.send(RemoteCallError(.unknownService, "\(name) shares no service named \(call.service)").reply(to: call.id))
            return
        }
        // The registry's current provider serves (a fallback is a proxy: never served on); else one whose
        // withdrawal `Exports` has under way, as its remote consumers' disposers may still call it.
        let current = context.currentProvider(of: call.service, in: realm).flatMap { $0.isFallback ? nil : $0 }
        guard let record = current ?? withdrawingProvider(of: call.service, in: call.realm) else {
            session.send(RemoteCallError(.withdrawn, "\(name) does not provide \(call.service)").reply(to: call.id))
            return
        }
        if session.role == .node { state.linkUsed(by: session.identity.name, at: .now) }
        session.serve(call, timeout: configuration.callTimeout, running: service.dispatch, on: record.value)
    }

    /// The provider of `service` in `realm` whose withdrawal is under way (its remote consumers are
    /// still letting go of it), if any.
    private func withdrawingProvider(of service: String, in realm: String?) -> ProviderRecord? {
        state.exports.withdrawingLives(of: service, in: realm).lazy.compactMap { self.remote.records[$0] }.first
    }

    /// Sends a call to a member's provider, while the member has the life the proxy was made for.
    func call(
        peer: String, incarnation: String? = nil, service: String, realm: String?, method: String, arguments: JSONObject
    ) async throws -> JSONDocument {
        // The link in use is taken without a call that may suspend: only a missing link is opened or
        // waited for, and then the choice is made again, as many times as `NodeState` lets a call wait.
        var waited = 0
        var choice = state.linkChoice(for: peer, life: incarnation)
        while choice == .wait || choice == .open, waited < NodeState.linkWaitsPerCall {
            _ = await openLink(to: peer)
            waited += 1
            choice = state.linkChoice(for: peer, life: incarnation, waited: waited)
        }
        guard case .use(let id) = choice, let session = peers[id] else {
            throw RemoteCallError(.withdrawn, "\(service) on \(peer) is gone")
        }
        state.linkUsed(by: peer, at: .now)
        return try await control.metrics.made { try await session.call(service: service, realm: realm, method: method, arguments: arguments) }
    }
}

/// The endpoint of a proxy: calls go to one member life's provider through the node's link to it.
struct NodeEndpoint: RemoteEndpoint {
    weak var node: Node?
    let peer: String
    let incarnation: String
    let service: String
    let realm: String?

    nonisolated(nonsending) func call(method: String, arguments: JSONObject) async throws -> JSONDocument {
        guard let node else { throw RemoteCallError(.withdrawn, "the node is stopping") }
        return try await node.call(
            peer: peer, incarnation: incarnation, service: service, realm: realm, method: method, arguments: arguments)
    }
}
