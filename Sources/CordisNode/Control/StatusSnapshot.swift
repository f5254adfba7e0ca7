import Cordis
import CordisWire

/// The node's part of `status --json` (`CONTRACTS.md` §8): its entries and every fiber, with what each
/// provides, the provider it uses for each injected service, and what a pending fiber waits for.
extension Node {
    /// This node's status object.
    public func statusSnapshot() -> JSONValue {
        var node = JSONObject()
        node["name"] = .string(name)
        node["addresses"] = .array(advertisedAddresses.map { .string($0) })
        node["incarnation"] = .string(configuration.incarnation)
        node["version"] = .string(CordisVersion.current)
        node["reachable"] = .bool(true)
        node["entries"] = .array(loader.status.map { entry in
            var object = JSONObject()
            object["id"] = .string(entry.id)
            object["plugin"] = .string(entry.plugin)
            object["parent"] = entry.parent.map { .string($0) } ?? .null
            object["disabled"] = .bool(entry.disabled)
            object["state"] = entry.state.map { .string($0.rawValue) } ?? .null
            object["error"] = entry.error.map { .string($0) } ?? .null
            return .object(object)
        })
        node["fibers"] = .array(context.fibers.filter { $0.id != context.fiber.id }.map(fiberStatus))
        return .object(node)
    }

    private func fiberStatus(_ fiber: Fiber) -> JSONValue {
        var object = JSONObject()
        object["fiber"] = .integer(fiber.id)
        object["entry"] = loader.entryID(for: fiber).map { .string($0) } ?? .null
        object["plugin"] = .string(fiber.name)
        object["state"] = .string(fiber.state.rawValue)
        object["provides"] = .array(fiber.provided.map { slot in
            .object(["service": .string(slot.name), "realm": realmJSON(slot.realm)])
        })
        var injects = JSONObject()
        for dependency in fiber.dependencies {
            guard let record = fiber.providers[dependency.name] else {
                injects[dependency.name] = .null
                continue
            }
            injects[dependency.name] = providerJSON(record)
        }
        object["injects"] = .object(injects)
        let missing = fiber.state == .pending ? fiber.missing : []
        object["missing"] = .array(missing.map { .string($0) })
        var waiting = JSONObject()
        for service in missing {
            if let reason = mismatches[service] { waiting[service] = .string(reason) }
        }
        if !waiting.isEmpty { object["waiting"] = .object(waiting) }
        object["error"] = fiber.error.map { .string("\($0)") } ?? .null
        return .object(object)
    }

    private func providerJSON(_ record: ProviderRecord) -> JSONValue {
        if record.isFallback, let proxy = proxies.first(where: { $0.value.fiber === record.fiber }) {
            return .object([
                "node": .string(proxy.key.node), "entry": .null, "fiber": .integer(proxy.key.fiber),
                "realm": proxy.key.realm.map { .string($0) } ?? .null,
            ])
        }
        return .object([
            "node": .string(name), "entry": loader.entryID(for: record.fiber).map { .string($0) } ?? .null,
            "fiber": .integer(record.fiber.id), "realm": realmJSON(record.slot.realm),
        ])
    }

    private func realmJSON(_ realm: Realm) -> JSONValue {
        switch realm {
        case .root: return .null
        case .label(let label): return .string(label)
        case .private: return .string("private")
        }
    }
}
