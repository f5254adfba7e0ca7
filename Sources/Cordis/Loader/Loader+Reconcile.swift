import CordisJSON

/// One entry of a tree, placed: its group, whether it runs, and the realms its groups and itself give it.
struct PlannedEntry {
    var entry: Entry
    var parent: String?
    /// False when the entry or one of its groups is disabled.
    var enabled: Bool
    /// The realm of each service isolated by the entry or its groups (the entry's own isolation wins).
    var realms: [String: Realm]
    /// The intercept config of each service set by the entry or its groups (the entry's own wins).
    var intercepts: JSONObject
}

extension Loader {
    /// Places every entry of `tree`, depth first in tree order; allocates private realms as needed.
    func plan(_ tree: EntryTree) -> [PlannedEntry] {
        var result: [PlannedEntry] = []
        var pending: [(entry: Entry, parent: PlannedEntry?)] = tree.entries.reversed().map { ($0, nil) }
        while let (entry, parent) = pending.popLast() {
            var realms = parent?.realms ?? [:]
            for (service, value) in entry.isolates {
                switch value {
                case .shared(let label): realms[service] = .label(label)
                case .local: realms[service] = privateRealm(entry: entry.id, service: service)
                }
            }
            var intercepts = parent?.intercepts ?? JSONObject()
            for (service, config) in entry.intercept { intercepts[service] = config }
            let planned = PlannedEntry(
                entry: entry, parent: parent?.entry.id, enabled: !entry.disabled && (parent?.enabled ?? true), realms: realms,
                intercepts: intercepts)
            result.append(planned)
            if let children = entry.children {
                pending.append(contentsOf: children.reversed().map { ($0, planned) })
            }
        }
        return result
    }

    private func privateRealm(entry: String, service: String) -> Realm {
        if let realm = privateRealms[entry]?[service] { return realm }
        let realm = Realm.private(ctx.world.makeRealmID(), name: "\(entry):\(service)")
        privateRealms[entry, default: [:]][service] = realm
        return realm
    }

    /// Makes the running fibers match `tree` (already validated and saved), emits `loader/entry` for
    /// what changed, and returns once the world is settled.
    func apply(_ newTree: EntryTree) async {
        let oldTree = tree
        let planned = plan(newTree)
        tree = newTree
        var stops: [Fiber] = []
        var updates: [(Fiber, PreparedPlugin)] = []
        var starts: [(EntryNode, PlannedEntry, PreparedPlugin?)] = []
        // Running fibers whose entry moved to another group: they keep running, under the new group.
        var moves: [(EntryNode, PlannedEntry)] = []
        var nextNodes: [String: EntryNode] = [:]
        nextNodes.reserveCapacity(planned.count)
        var descendants: [ObjectIdentifier: [Fiber]]?
        var changes: [EntryChange] = []

        func stop(_ node: EntryNode) {
            if let fiber = node.fiber {
                node.fiber = nil
                stops.append(fiber)
            }
        }

        for item in planned {
            let entry = item.entry
            let node = nodes[entry.id] ?? EntryNode(id: entry.id)
            nextNodes[entry.id] = node
            changes += Self.changes(of: entry, parent: item.parent, from: node.entry, parent: node.parent)
            let previousParent = node.parent
            node.entry = entry
            node.parent = item.parent
            let pluginName = entry.isGroup ? Entry.groupPlugin : entry.plugin
            let config = Self.normalizedConfig(entry.config)
            let previousPlugin = node.plugin, previousGroup = node.isGroup, previousConfig = node.config
            let previousInject = node.inject, previousIntercepts = node.intercepts
            node.inject = entry.inject
            node.intercepts = item.intercepts
            node.plugin = pluginName
            node.isGroup = entry.isGroup
            node.config = config
            let previousError = node.error
            node.error = nil
            if let fiber = node.fiber, fiber.state == .disposed { node.fiber = nil }
            guard item.enabled else {
                stop(node)
                continue
            }
            var catalogItem: PluginCatalog.Item?
            if !entry.isGroup {
                guard let found = catalog.item(named: pluginName) else {
                    let error = "plugin \"\(pluginName)\" is not in the catalog"
                    node.error = error
                    // Logged when the entry first meets it (as cordis-ios does), not on every reconcile.
                    if previousError != error { ctx.logger("loader").error(error) }
                    stop(node)
                    continue
                }
                catalogItem = found
            }
            if let fiber = node.fiber {
                // A new inject list or intercept changes what the fiber waits for or reads: it starts anew.
                // A group's own fiber reads nothing (its children's contexts carry the group's realms and
                // intercepts), so it starts anew only when the entry stops being a group.
                let rebuild = previousPlugin != pluginName || previousGroup != entry.isGroup
                    || (!entry.isGroup && (previousInject != entry.inject || previousIntercepts != item.intercepts))
                    || realmsChanged(for: fiber, to: item.realms, provides: catalogItem?.provides ?? [],
                                     isGroup: entry.isGroup, descendants: &descendants)
                if !rebuild, previousParent != item.parent { moves.append((node, item)) }
                if !rebuild {
                    guard previousConfig != config, let catalogItem else { continue }
                    do {
                        updates.append((fiber, try prepare(catalogItem, config)))
                    } catch {
                        node.error = "\(error)"
                        stop(node)
                    }
                    continue
                }
                stop(node)
            }
            guard let catalogItem else {
                starts.append((node, item, nil))
                continue
            }
            do {
                starts.append((node, item, try prepare(catalogItem, config)))
            } catch {
                node.error = "\(error)"
            }
        }
        for (id, node) in nodes where nextNodes[id] == nil { stop(node) }
        if nodes.count + changes.count(where: { $0.kind == .added }) > nextNodes.count {
            for item in oldTree.allEntries where nextNodes[item.entry.id] == nil {
                changes.append(EntryChange(id: item.entry.id, kind: .removed))
            }
        }
        nodes = nextNodes
        let used = Set(planned.lazy.filter { $0.entry.isolates.values.contains(.local) }.map(\.entry.id))
        privateRealms = privateRealms.filter { used.contains($0.key) }

        // A moving fiber leaves its old group first (which may be stopping), held by the Loader's fiber
        // until its new group runs.
        for (node, _) in moves {
            try? node.fiber?.rehome(under: ctx)
        }
        for fiber in stops {
            await fiber.dispose(reason: .parent)
        }
        for (fiber, prepared) in updates where fiber.state != .disposed {
            updating.insert(fiber.id)
            do {
                try await fiber.update(reconfiguring: prepared.config)
            } catch {
                // The fiber keeps the new config and shows its failure in `status`.
            }
            updating.remove(fiber.id)
        }
        for (node, item, prepared) in starts {
            let context = entryContext(item.realms, intercepts: item.intercepts, group: await groupFiber(of: item))
            do {
                let fiber: Fiber
                if let prepared {
                    fiber = try prepared.start(context, injecting: item.entry.inject)
                } else {
                    fiber = try context.function(name: Entry.groupPlugin) { _ in }
                }
                fiber.onDispose.append { [weak self, weak node] fiber, reason in
                    guard let self, let node else { return }
                    self.fiberDisposed(fiber, reason: reason, node: node)
                }
                node.fiber = fiber
                entryOfFiber[fiber.id] = node.id
                fiber.logFields = [("CORDIS_ENTRY", node.id)]
            } catch {
                node.error = "\(error)"
            }
        }
        for (node, item) in moves {
            guard let fiber = node.fiber, fiber.state != .disposed, let group = await groupFiber(of: item) else { continue }
            try? fiber.rehome(under: entryContext(item.realms, intercepts: item.intercepts, group: group))
        }
        emit(changes)
        await ctx.settled()
    }

    /// The running fiber of the group `item` belongs to, once it is active (a group's fiber starts
    /// before its children, and holds nothing, so it is active as soon as it has run); nil at the top
    /// level, or when the group's fiber is not running.
    private func groupFiber(of item: PlannedEntry) async -> Fiber? {
        guard let parent = item.parent, let group = nodes[parent]?.fiber, group.state != .disposed else { return nil }
        if group.state != .active { _ = try? await group.await() }
        return group.state == .active ? group : nil
    }

    /// A missing or null config is `{}`.
    static func normalizedConfig(_ config: JSONValue?) -> JSONValue {
        guard let config, config != .null else { return .object(JSONObject()) }
        return config
    }

    /// The context an entry's fiber is created on: its group's fiber's (as in cordis-ios, whose group
    /// plugin starts its children), or the Loader's at the top level, with the entry's realms and
    /// intercepts (its groups' and its own) over the Loader's.
    func entryContext(_ realms: [String: Realm], intercepts: JSONObject = JSONObject(), group: Fiber? = nil) -> Context {
        let owner = group?.ctx ?? ctx
        guard !realms.isEmpty || !intercepts.isEmpty || group != nil else { return ctx }
        var merged = ctx.intercepts
        for (service, config) in intercepts { merged[service] = config }
        return Context(fiber: owner.fiber, realms: mergedRealms(realms), intercepts: merged, parent: owner)
    }

    private func mergedRealms(_ realms: [String: Realm]) -> [String: Realm] {
        var merged = ctx.realms
        for (service, realm) in realms { merged[service] = realm == .root ? nil : realm }
        return merged
    }

    /// Whether giving `fiber` the realms `realms` changes the realm of a service it (or a plugin it
    /// started) injects or provides. A group's own fiber holds nothing, so it never needs rebuilding.
    private func realmsChanged(
        for fiber: Fiber, to realms: [String: Realm], provides: [String], isGroup: Bool,
        descendants: inout [ObjectIdentifier: [Fiber]]?
    ) -> Bool {
        guard !isGroup else { return false }
        let current = fiber.ctx.realms
        let wanted = mergedRealms(realms)
        guard current != wanted else { return false }
        let changed = Set(current.keys).union(wanted.keys).filter { current[$0] != wanted[$0] }
        if !changed.isDisjoint(with: provides) { return true }
        if uses(fiber, anyOf: changed) { return true }
        if descendants == nil { descendants = childrenByParent() }
        var pending = descendants?[ObjectIdentifier(fiber)] ?? []
        var visited = 0
        while let child = pending.popLast(), visited < 1_000_000 {
            visited += 1
            if uses(child, anyOf: changed) { return true }
            pending.append(contentsOf: descendants?[ObjectIdentifier(child)] ?? [])
        }
        return false
    }

    private func uses(_ fiber: Fiber, anyOf services: Set<String>) -> Bool {
        fiber.declaredDependencies.contains { services.contains($0.name) } || fiber.providedSlots.contains { services.contains($0.name) }
    }

    private func childrenByParent() -> [ObjectIdentifier: [Fiber]] {
        var children: [ObjectIdentifier: [Fiber]] = [:]
        for fiber in ctx.world.fibers.fibers {
            guard let parent = fiber.startedFromFiber else { continue }
            children[ObjectIdentifier(parent), default: []].append(fiber)
        }
        return children
    }

    /// What changed about one entry between the last applied tree and the new one, in `Kind` order.
    static func changes(of entry: Entry, parent: String?, from previous: Entry?, parent previousParent: String?) -> [EntryChange] {
        let id = entry.id
        guard let was = previous else { return [EntryChange(id: id, kind: .added)] }
        var changes: [EntryChange] = []
        if entry.plugin != was.plugin || entry.isGroup != was.isGroup { changes.append(EntryChange(id: id, kind: .plugin)) }
        if parent != previousParent { changes.append(EntryChange(id: id, kind: .moved)) }
        if entry.isolates != was.isolates { changes.append(EntryChange(id: id, kind: .isolate)) }
        if entry.inject != was.inject { changes.append(EntryChange(id: id, kind: .inject)) }
        if entry.intercept != was.intercept { changes.append(EntryChange(id: id, kind: .intercept)) }
        if normalizedConfig(entry.config) != normalizedConfig(was.config) { changes.append(EntryChange(id: id, kind: .config)) }
        if entry.disabled != was.disabled { changes.append(EntryChange(id: id, kind: entry.disabled ? .disabled : .enabled)) }
        return changes
    }

    /// Emits `loader/entry` for each change, on the Loader's context.
    private func emit(_ changes: [EntryChange]) {
        for change in changes {
            do {
                try ctx.emit(LoaderEntryEvent.self, change)
                try ctx.emit(.entryChanged, change, filter: .all)
            } catch {
                ctx.logger("loader").error("a listener of loader/entry failed: \(error)")
            }
        }
    }
}
