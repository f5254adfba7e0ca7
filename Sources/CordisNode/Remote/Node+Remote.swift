import Cordis
import CordisWire

/// Remote services: exporting local providers, proxies for remote ones, serving calls.
extension Node {
    // MARK: - Exports

    /// Follows fiber states: a provider that becomes active is announced; one that starts unloading is
    /// withdrawn from every peer before its own teardown runs.
    func fiberChanged(_ change: StatusChange) {
        switch change.fiber.state {
        case .active:
            exportAvailableProviders()
        case .unloading, .disposed, .pending, .failed:
            for (id, export) in exports where export.record.fiber === change.fiber && export.hold == nil {
                withdraw(exportID: id)
            }
        case .loading:
            break
        }
    }

    /// Announces every local, available, remote-capable provider not announced yet.
    func exportAvailableProviders() {
        for record in context.providerRecords where !record.isFallback && record.isAvailable {
            guard exports[record.id] == nil, let service = remoteServices.service(named: record.slot.name) else { continue }
            let realm: String?
            switch record.slot.realm {
            case .root: realm = nil
            case .label(let label): realm = label
            case .private: continue
            }
            let announcement = ServiceAnnouncement(
                service: service.name, realm: realm, interface: service.interface, interfaceVersion: service.version,
                node: name, fiber: record.fiber.id)
            exports[record.id] = Export(record: record, announcement: announcement)
            logger.info("providing \(service.name) to the cluster", fields: [("CORDIS_FIBER", "\(record.fiber.id)")])
            for session in sessions.values { session.send(.announce(announcement)) }
        }
    }

    /// Tells every peer the provider is going; its teardown waits for their acknowledgements, a lost
    /// link, or the withdrawal deadline.
    func withdraw(exportID id: Int) {
        guard var export = exports[id] else { return }
        export.awaiting = Set(sessions.keys)
        guard !export.awaiting.isEmpty else {
            exports[id] = nil
            return
        }
        export.hold = export.record.fiber.holdWithdrawal("remote consumers of \(export.announcement.service)")
        exports[id] = export
        for session in sessions.values { session.send(.withdraw(export.announcement.provider)) }
        let deadline = configuration.withdrawTimeout
        detach { [weak self] in
            try? await Task.sleep(for: deadline)
            guard let self, let late = self.exports[id] else { return }
            self.logger.warn(
                "withdrawal of \(late.announcement.service) went ahead without acknowledgements from \(late.awaiting.sorted())")
            self.finishWithdrawal(id)
        }
    }

    /// Records a peer's acknowledgement (or its loss) for a withdrawal in progress; the last one lets the
    /// provider's teardown run, which is logged (before that teardown) with who acknowledged.
    func acknowledge(exportID id: Int, from peer: String, linkLost: Bool = false) {
        guard var export = exports[id], export.hold != nil, export.awaiting.remove(peer) != nil else { return }
        if linkLost { export.lost.append(peer) } else { export.acknowledged.append(peer) }
        exports[id] = export
        guard export.awaiting.isEmpty else { return }
        var outcome = "acknowledged by \(export.acknowledged.sorted())"
        if !export.lost.isEmpty { outcome += ", links lost to \(export.lost.sorted())" }
        logger.info(
            "withdrawal of \(export.announcement.service) finished: \(outcome)",
            fields: [("CORDIS_FIBER", "\(export.record.fiber.id)")])
        finishWithdrawal(id)
    }

    private func finishWithdrawal(_ id: Int) {
        guard let export = exports.removeValue(forKey: id) else { return }
        export.hold?.release()
    }

    // MARK: - Proxies

    /// A peer provides a service: a proxy fiber provides it here, as a fallback ranked by the node name.
    func addProxy(for announcement: ServiceAnnouncement, from session: PeerSession) {
        let provider = announcement.provider
        guard proxies[provider] == nil, let service = remoteServices.service(named: announcement.service) else { return }
        guard service.interface == announcement.interface, service.version == announcement.interfaceVersion else {
            let reason = "\(announcement.service) on \(announcement.node) speaks \(announcement.interface) "
                + "version \(announcement.interfaceVersion); this node knows \(service.interface) version \(service.version)"
            mismatches[announcement.service] = reason
            logger.warn("interface mismatch: \(reason)", fields: [("CORDIS_PEER", announcement.node)])
            return
        }
        let realm: Realm = announcement.realm.map { .label($0) } ?? .root
        let endpoint = NodeEndpoint(
            node: self, peer: session.identity.name, service: announcement.service, realm: announcement.realm)
        let proxy = service.makeProxy(endpoint)
        let rank = announcement.node
        do {
            let fiber = try context.isolate(announcement.service, in: realm).plugin(name: "remote:\(announcement.service)") { scope in
                try scope.ctx.provide(name: announcement.service, value: proxy, fallbackRank: rank)
            }
            proxies[provider] = ProxyState(fiber: fiber, session: session.id)
        } catch {
            logger.error("cannot create a proxy for \(announcement.service) on \(announcement.node): \(error)")
        }
    }

    /// A peer withdraws a service: its consumers here unload first, then the acknowledgement goes back.
    func removeProxy(_ provider: ServiceProvider, from session: PeerSession) {
        guard let proxy = proxies.removeValue(forKey: provider) else {
            session.send(.withdrawAck(provider))
            return
        }
        detach { [weak self] in
            try? await proxy.fiber.dispose()
            self?.logger.info(
                "acknowledged the withdrawal of \(provider.service) on \(provider.node)",
                fields: [("CORDIS_PEER", session.identity.name)])
            session.send(.withdrawAck(provider))
        }
    }

    // MARK: - Calls

    /// Runs a call on the local provider of its service and realm, and answers it.
    func serve(_ call: RemoteCall, from session: PeerSession) {
        let realm: Realm = call.realm.map { .label($0) } ?? .root
        // A provider being withdrawn still serves: its remote consumers' disposers may call it.
        let withdrawing = exports.values.first {
            $0.announcement.service == call.service && $0.announcement.realm == call.realm
        }?.record
        let current = context.provider(of: call.service, in: realm).flatMap { $0.isFallback ? nil : $0 }
        guard let service = remoteServices.service(named: call.service), let record = current ?? withdrawing else {
            session.send(.error(RemoteError(
                id: call.id, code: RemoteCallError.Code.withdrawn.rawValue,
                message: "\(name) does not provide \(call.service)")))
            return
        }
        if let refusal = session.inbound.admit(call) {
            session.send(refusal)
            return
        }
        let instance = record.value
        detach {
            defer { _ = session.inbound.finish(call.id) }
            do {
                let value = try await service.dispatch(instance, call.method, call.args)
                session.send(.result(RemoteResult(id: call.id, value: value)))
            } catch let error as RemoteCallError {
                session.send(.error(RemoteError(id: call.id, code: error.code.rawValue, message: error.message)))
            } catch {
                session.send(.error(RemoteError(id: call.id, code: RemoteCallError.Code.failed.rawValue, message: "\(error)")))
            }
        }
    }

    /// Sends a call to a peer's provider.
    func call(peer: String, service: String, realm: String?, method: String, arguments: JSONObject) async throws -> JSONValue {
        guard let session = sessions[peer] else {
            throw RemoteCallError(.withdrawn, "\(service) on \(peer) is gone")
        }
        return try await session.call(service: service, realm: realm, method: method, arguments: arguments)
    }
}

/// The endpoint of a proxy: calls go to one peer's provider through the node's link to it.
struct NodeEndpoint: RemoteEndpoint {
    weak var node: Node?
    let peer: String
    let service: String
    let realm: String?

    func call(method: String, arguments: JSONObject) async throws -> JSONValue {
        guard let node else { throw RemoteCallError(.withdrawn, "the node is stopping") }
        return try await node.call(peer: peer, service: service, realm: realm, method: method, arguments: arguments)
    }
}
