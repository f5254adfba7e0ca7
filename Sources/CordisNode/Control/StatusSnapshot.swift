import Cordis
import CordisWire

/// The node's part of `status --json`: its entries (each with its config as stored) and every fiber, with what each provides, the
/// provider it uses for each injected service, and what a pending fiber waits for (with the dependency
/// cycle, when it waits for one).
extension Node {
    /// This node's status object. Throws `EncodingError` if the status cannot be written as JSON.
    public func statusSnapshot() throws -> JSONValue {
        try JSONValueEncoder().encode(nodeStatus())
    }

    /// This node's status.
    func nodeStatus() -> NodeStatus {
        var status = NodeStatus(
            name: name, addresses: advertisedAddresses, incarnation: liveIncarnation,
            version: CordisVersion.current, reachable: true,
            entries: loader.status.map { entry in
                EntryStatus(
                    id: entry.id, plugin: entry.plugin, parent: entry.parent, disabled: entry.disabled,
                    state: entry.state?.rawValue, error: entry.error, waiting: entry.waiting,
                    config: Self.statusConfig(entry.config))
            },
            fibers: { () -> [FiberStatus] in
                // A proxy's origin: the node whose provider it stands for.
                let origins = Dictionary(remote.proxies.map { ($0.value.id, $0.key.node) }, uniquingKeysWith: { first, _ in first })
                return context.fibers.filter { $0.id != context.fiber.id }.map { fiberStatus($0, origin: origins[$0.id]) }
            }())
        status.degraded = degradedReason
        if let etcd, etcd.lease != 0, degradedReason == nil {
            let hex = String(UInt64(bitPattern: etcd.lease), radix: 16)
            let ttl = etcd.leaseTTL.components
            status.lease = LeaseStatus(
                id: String(repeating: "0", count: max(0, 16 - hex.count)) + hex,
                ttl: Double(ttl.seconds) + Double(ttl.attoseconds) / 1e18)
        }
        return status
    }

    /// An entry's config as the entries file holds it (references to the environment stay references),
    /// `{}` when it has none: what the Loader gives its plugin then.
    private static func statusConfig(_ config: JSONValue?) -> JSONValue {
        guard let config, config != .null else { return .object(JSONObject()) }
        return config
    }

    private func fiberStatus(_ fiber: Fiber, origin: String?) -> FiberStatus {
        let missing = fiber.state == .pending ? fiber.missingInjections : []
        return FiberStatus(
            fiber: fiber.id, entry: loader.entryID(for: fiber), plugin: fiber.name, state: fiber.state.rawValue,
            provides: fiber.providedSlots.map { FiberStatus.Slot(service: $0.name, realm: realmLabel($0.realm)) },
            injects: fiber.declaredDependencies.map { dependency in
                FiberStatus.Injection(service: dependency.name, provider: fiber.providerRecords[dependency.name].map(provider))
            },
            missing: missing,
            waiting: missing.compactMap { service in
                mismatches[service].map { FiberStatus.Mismatch(service: service, reason: $0) }
            },
            cycle: fiber.state == .pending ? fiber.dependencyCycle ?? [] : [],
            error: fiber.error.map { "\($0)" }, origin: origin)
    }

    private func provider(_ record: ProviderRecord) -> FiberStatus.Provider {
        if record.isFallback, let proxy = remote.proxies.first(where: { $0.value === record.fiber }) {
            return FiberStatus.Provider(node: proxy.key.node, entry: nil, fiber: proxy.key.fiber, realm: proxy.key.realm)
        }
        return FiberStatus.Provider(
            node: name, entry: loader.entryID(for: record.fiber), fiber: record.fiber.id, realm: realmLabel(record.slot.realm))
    }

    private func realmLabel(_ realm: Realm) -> String? {
        realm.isPrivate ? "private" : realm.label
    }
}
