import CordisJSON

/// Runs a node's plugin tree from an `EntryStore`: starts every entry's fiber, and applies changes by
/// validating them, saving the tree, then reconciling the running fibers with it by id.
///
/// Every entry's fiber is a child of the Loader's context (groups included: a group's fiber is a
/// plain `group` plugin that holds nothing, and its children run beside it, each in the realms its
/// groups and its own `isolate` give it). Changes are applied one at a time in the order they arrive,
/// and each returns once no fiber of the world has a transition in flight.
/// A change that throws changed nothing: neither the stored tree nor the running fibers.
/// All members are isolated to `CordisActor`.
@CordisActor
public final class Loader {
    /// The context whose fiber holds every entry's fiber, and where `loader/entry` is emitted.
    public let ctx: Context
    /// The plugins entries may name.
    public let catalog: PluginCatalog
    /// Where the tree is loaded from and saved to.
    public let store: any EntryStore
    /// The tree as last loaded or saved.
    public internal(set) var tree = EntryTree()

    /// The running state of each entry of the tree, by id.
    var nodes: [String: EntryNode] = [:]
    /// The private realm of each (entry, service) isolated with `true`.
    var privateRealms: [String: [String: Realm]] = [:]
    /// Fibers the Loader is updating itself, so their `internal/update` is not written back.
    var updating: Set<Int> = []
    /// The entry id of each entry fiber, by fiber id.
    var entryOfFiber: [Int: String] = [:]
    /// Whether `start()` succeeded and `stop()` has not been called since.
    public private(set) var isRunning = false
    private var tail: Task<Void, Never>?
    private var updateListener: EffectHandle?

    /// Where `{"$env": "NAME"}` references in entry configs are read from.
    public let environment: ConfigEnvironment

    /// Creates a Loader; nothing runs until `start()`.
    ///
    /// - Parameter environment: where entry configs' environment references are resolved (the
    ///   process's environment by default).
    public init(
        ctx: Context, catalog: PluginCatalog, store: any EntryStore, environment: ConfigEnvironment = .process
    ) {
        self.ctx = ctx
        self.catalog = catalog
        self.store = store
        self.environment = environment
    }

    /// `config` decoded and checked for `item`, its environment references resolved first.
    ///
    /// - Throws: `ConfigError` for an unresolvable reference or a config the plugin refuses.
    func prepare(_ item: PluginCatalog.Item, _ config: JSONValue) throws -> PreparedPlugin {
        try item.prepare(environment.resolve(config))
    }

    // MARK: - Reading

    /// The top-level entries of the tree.
    public var entries: [Entry] { tree.entries }

    /// The entry with `id`, wherever it is in the tree.
    public func entry(id: String) -> Entry? { tree.entry(id: id) }

    /// The fiber of entry `id`, or nil when it has none (disabled, failed to start, unknown).
    public func fiber(for id: String) -> Fiber? {
        guard let fiber = nodes[id]?.fiber, fiber.state != .disposed else { return nil }
        return fiber
    }

    /// The catalog's plugins, with their config fields.
    public var plugins: [PluginCatalog.Item] { catalog.plugins }

    /// One status line per entry, depth first in tree order (the `entries` of `status --json`).
    public var status: [EntryStatus] {
        tree.allEntries.map { item in
            let entry = item.entry
            let node = nodes[entry.id]
            let fiber = fiber(for: entry.id)
            var error = node?.error
            if error == nil, let fiber, fiber.state == .failed, let failure = fiber.error { error = "\(failure)" }
            return EntryStatus(
                id: entry.id, plugin: entry.isGroup ? Entry.groupPlugin : entry.plugin,
                parent: item.parent, disabled: entry.disabled, state: fiber?.state, error: error,
                waiting: fiber?.pendingReason, config: entry.config)
        }
    }

    /// Waits until every change asked for so far is applied and no fiber has a transition in flight.
    public func settled() async {
        _ = try? await serialized { await self.ctx.settled() }
    }

    // MARK: - Lifecycle

    /// Loads the tree from the store and starts every enabled entry; returns once they are settled.
    ///
    /// - Throws: the store's error (an `EntryStoreError` naming the file, line and column for a file
    ///   that does not parse; the file is left as it is), or `LoaderError` for a tree with a bad or
    ///   repeated id. Nothing starts then.
    public func start() async throws {
        try await serialized {
            let loaded = try self.load()
            self.isRunning = true
            self.listenForUpdates()
            await self.apply(loaded)
        }
    }

    /// Reads the store again and reconciles the running fibers with what it holds.
    ///
    /// - Throws: like `start()`; the running fibers are then left as they were.
    public func reload() async throws {
        try await serialized {
            let loaded = try self.load()
            self.isRunning = true
            self.listenForUpdates()
            await self.apply(loaded)
        }
    }

    /// Disposes every entry's fiber (reason `.parent`: no entry is marked disabled) and stops applying
    /// changes until the next `start()`. The stored tree is not touched.
    public func stop() async {
        _ = try? await serialized {
            self.isRunning = false
            await self.updateListener?.revert()
            self.updateListener = nil
            for item in self.tree.allEntries.reversed() {
                guard let node = self.nodes[item.entry.id], let fiber = node.fiber else { continue }
                node.fiber = nil
                await fiber.dispose(reason: .parent)
            }
            await self.ctx.settled()
        }
    }

    // MARK: - Changes

    /// Sets or clears the `disabled` flag of entry `id`: a disabled entry's fiber is disposed (for a
    /// group, its children's too); an enabled one starts afresh.
    ///
    /// - Throws: `LoaderError` (`unknown-entry`, `invalid-config` when enabling an entry, or a group
    ///   holding an entry, whose config is rejected, `save-failed`); nothing changed then.
    public func setDisabled(id: String, _ disabled: Bool) async throws {
        try await change { tree in
            var subtree: [String] = []
            guard let changed = tree.modifying(id, { entry in
                entry.disabled = disabled
                subtree = entry.subtreeIDs
            }) else { throw LoaderError.unknownEntry(id) }
            return (changed, disabled ? [] : subtree)
        }
    }

    /// Replaces the config of entry `id`; its running fiber restarts with it (`Fiber.update`).
    ///
    /// - Throws: `LoaderError` `invalid-config` naming the entry and every path
    ///   (`entry "counter": invalid config:\n  - expected integer, got string (at start)`),
    ///   `unknown-entry`, `save-failed`; nothing changed then.
    public func update(id: String, config: JSONValue) async throws {
        try await change { tree in
            var isGroup = false
            var plugin: String?
            guard let changed = tree.modifying(id, { entry in
                isGroup = entry.isGroup
                plugin = entry.plugin
                entry.config = config
            }) else { throw LoaderError.unknownEntry(id) }
            if isGroup {
                throw LoaderError(.invalidConfig, entryID: id, "entry \"\(id)\": a group takes no config")
            }
            // A disabled entry's new config is checked too, so it cannot be saved broken.
            if let item = plugin.flatMap(self.catalog.item(named:)) {
                do {
                    _ = try self.prepare(item, config)
                } catch {
                    throw LoaderError.invalidConfig(error, entry: id)
                }
            }
            return (changed, [id])
        }
    }

    /// Replaces the `isolate` map of entry `id`; only the fibers whose realm for a service they inject
    /// or provide changes are rebuilt (for a group: in its whole subtree).
    ///
    /// - Throws: `LoaderError` `unknown-entry`, `save-failed`; nothing changed then.
    public func update(id: String, isolate: [String: IsolateSpec]) async throws {
        try await change { tree in
            guard let changed = tree.modifying(id, { $0.isolate = isolate }) else { throw LoaderError.unknownEntry(id) }
            return (changed, [])
        }
    }

    /// Replaces the `inject` list of entry `id` (services its fiber injects beside its plugin's own);
    /// its fiber starts anew with them.
    ///
    /// - Throws: `LoaderError` `invalid-entry` (a group, or a service named twice), `unknown-entry`,
    ///   `save-failed`; nothing changed then.
    public func update(id: String, inject: [Dependency]) async throws {
        try await change { tree in
            guard let changed = tree.modifying(id, { $0.inject = inject }) else { throw LoaderError.unknownEntry(id) }
            return (changed, [])
        }
    }

    /// Replaces the `intercept` map of entry `id` (service name to config); the fibers of the entry and,
    /// for a group, of its subtree whose intercepts change start anew.
    ///
    /// - Throws: `LoaderError` `invalid-entry` (an empty service name), `unknown-entry`, `save-failed`;
    ///   nothing changed then.
    public func update(id: String, intercept: JSONObject) async throws {
        try await change { tree in
            guard let changed = tree.modifying(id, { $0.intercept = intercept }) else { throw LoaderError.unknownEntry(id) }
            return (changed, [])
        }
    }

    /// Adds `entry` (a plugin entry or a group with its children) to the group `parent`, or at the top
    /// level, and starts it unless it is disabled.
    ///
    /// - Throws: `LoaderError` `invalid-id`, `duplicate-id`, `unknown-plugin`, `invalid-config`,
    ///   `unknown-entry` or `not-a-group` for the parent, `save-failed`; nothing changed then.
    public func add(_ entry: Entry, parent: String? = nil) async throws {
        try await change { tree in
            if let parent {
                guard let group = tree.entry(id: parent) else { throw LoaderError.unknownEntry(parent) }
                guard group.isGroup else {
                    throw LoaderError(.notAGroup, entryID: parent, "entry \"\(parent)\" is not a group")
                }
            }
            try self.checkNewIDs(entry.subtreeIDs)
            guard let changed = tree.inserting(entry, into: parent) else { throw LoaderError.unknownEntry(parent ?? "") }
            return (changed, entry.subtreeIDs)
        }
    }

    /// Removes entry `id` (with its children, for a group) and disposes its fibers.
    ///
    /// - Throws: `LoaderError` `unknown-entry`, `save-failed`; nothing changed then.
    public func remove(id: String) async throws {
        try await change { tree in
            guard let (changed, _) = tree.removing(id) else { throw LoaderError.unknownEntry(id) }
            return (changed, [])
        }
    }

    /// Moves entry `id` into the group `parent` (the top level when nil), at its end. A fiber whose
    /// realms and enabled state stay the same keeps running untouched.
    ///
    /// - Throws: `LoaderError` `unknown-entry`, `not-a-group`, `invalid-move` (into itself or its own
    ///   subtree), `invalid-config` when the move enables an entry whose config is rejected,
    ///   `save-failed`; nothing changed then.
    public func move(id: String, toParent parent: String?) async throws {
        try await change { tree in
            guard let (without, moved) = tree.removing(id) else { throw LoaderError.unknownEntry(id) }
            if let parent {
                if moved.subtreeIDs.contains(parent) {
                    throw LoaderError(.invalidMove, entryID: id, "entry \"\(id)\" cannot move into its own subtree")
                }
                guard let group = tree.entry(id: parent) else { throw LoaderError.unknownEntry(parent) }
                guard group.isGroup else {
                    throw LoaderError(.notAGroup, entryID: parent, "entry \"\(parent)\" is not a group")
                }
            }
            guard let changed = without.inserting(moved, into: parent) else { throw LoaderError.unknownEntry(parent ?? "") }
            return (changed, moved.subtreeIDs)
        }
    }

    // MARK: - Applying changes

    /// Runs `body` after every change asked for before it has finished (a FIFO on `CordisActor`).
    func serialized<T: Sendable>(_ body: @escaping @CordisActor () async throws -> T) async throws -> T {
        try await enqueue(body).value
    }

    /// Queues `body` behind every change asked for so far, synchronously (so a change queued by a
    /// fiber's observer is in line before anything its caller asks next), and returns its task.
    @discardableResult
    func enqueue<T: Sendable>(_ body: @escaping @CordisActor () async throws -> T) -> Task<T, any Error> {
        let previous = tail
        let task = Task { @CordisActor in
            await previous?.value
            return try await body()
        }
        tail = Task { @CordisActor in _ = await task.result }
        return task
    }

    /// Validates, saves and applies a tree made by `edit` from the current one. `edit` returns the new
    /// tree and the ids whose plugin and config must be valid (the entries the change starts).
    func change(_ edit: @escaping @CordisActor (EntryTree) throws -> (EntryTree, [String])) async throws {
        try await serialized {
            guard self.isRunning else {
                throw LoaderError(.notRunning, "the loader is not running: call start() first")
            }
            let (changed, touched) = try edit(self.tree)
            do {
                try changed.checkLimits()
            } catch let error as EntryError {
                throw LoaderError(.limitExceeded, entryID: error.entryID, "refused: \(error.message)", underlying: error)
            }
            do {
                try changed.checkServiceFields()
            } catch let error as EntryError {
                throw LoaderError(.invalidEntry, entryID: error.entryID, error.message, underlying: error)
            }
            try self.validate(changed, starting: touched, checkingIDs: false)
            try self.save(changed)
            await self.apply(changed)
        }
    }

    private func load() throws -> EntryTree {
        let loaded: EntryTree = try store.load()
        try validate(loaded, starting: [])
        return loaded
    }

    /// Checks every id of `tree`, and the plugin and config of the entries of `ids` that will run.
    ///
    /// - Parameter checkingIDs: false for a change whose new ids `checkNewIDs` already checked.
    func validate(_ tree: EntryTree, starting ids: [String], checkingIDs: Bool = true) throws {
        do {
            if checkingIDs { try tree.validate() }
        } catch let error as EntryError {
            throw LoaderError(error: error)
        }
        guard !ids.isEmpty else { return }
        let wanted = Set(ids)
        var pending: [(entry: Entry, enabled: Bool)] = tree.entries.reversed().map { ($0, true) }
        while let (entry, parentEnabled) = pending.popLast() {
            let enabled = parentEnabled && !entry.disabled
            if let children = entry.children {
                pending.append(contentsOf: children.reversed().map { ($0, enabled) })
                continue
            }
            guard wanted.contains(entry.id) else { continue }
            let plugin = entry.plugin
            guard let item = catalog.item(named: plugin) else {
                // An entry the file already had is kept, and reported in `status`; a new one is refused.
                if nodes[entry.id]?.entry?.plugin == entry.plugin { continue }
                throw LoaderError.unknownPlugin(plugin, entry: entry.id)
            }
            guard enabled else { continue }
            do {
                _ = try prepare(item, entry.config ?? .object(JSONObject()))
            } catch {
                throw LoaderError.invalidConfig(error, entry: entry.id)
            }
        }
    }

    /// Checks ids about to be added: well formed, and used neither in the tree nor twice among themselves.
    private func checkNewIDs(_ ids: [String]) throws {
        var seen: Set<String> = []
        for id in ids {
            guard Entry.isValidID(id) else {
                throw LoaderError(.invalidID, entryID: id, "entry \"\(id)\": invalid id: use 1 to 64 characters of A-Z a-z 0-9 . _ -")
            }
            guard nodes[id] == nil, seen.insert(id).inserted else {
                throw LoaderError(.duplicateID, entryID: id, "entry \"\(id)\": duplicate id")
            }
        }
    }

    private func save(_ tree: EntryTree) throws {
        do {
            try store.save(tree)
        } catch let error as EntryStoreError where error.code == .limitExceeded {
            throw LoaderError(.limitExceeded, "refused: \(error.message)", underlying: error)
        } catch {
            throw LoaderError(
                .saveFailed, "cannot save the entries, nothing changed: \(error)", underlying: error)
        }
    }

    // MARK: - Self-disposal and config write-back

    /// Called when an entry's fiber is disposed: a fiber that disposed itself marks its entry disabled.
    func fiberDisposed(_ fiber: Fiber, reason: Fiber.DisposeReason, node: EntryNode) {
        entryOfFiber[fiber.id] = nil
        guard node.fiber === fiber else { return }
        node.fiber = nil
        guard reason == .explicit, isRunning else { return }
        let id = node.id
        enqueue { [weak self] in
            guard let self else { return }
            do {
                guard self.isRunning, let changed = self.tree.modifying(id, { $0.disabled = true }),
                      self.tree.entry(id: id)?.disabled == false
                else { return }
                try self.save(changed)
                await self.apply(changed)
            } catch {
                self.ctx.logger("loader").error("cannot mark entry \"\(id)\" disabled after it disposed itself: \(error)")
            }
        }
    }

    private func listenForUpdates() {
        guard updateListener == nil else { return }
        updateListener = try? ctx.onValue(.configReplaced) { [weak self] (update: FiberUpdate) in
            guard !update.noSave else { return }
            self?.fiberUpdatedItself(update.fiber)
        }
    }

    /// A plugin that updated its own config (`fiber.update(config:)`) has it written back to its entry.
    private func fiberUpdatedItself(_ fiber: Fiber) {
        guard !updating.contains(fiber.id), isRunning,
              let id = entryOfFiber[fiber.id], let node = nodes[id], node.fiber === fiber, !node.isGroup,
              let item = catalog.item(named: node.plugin), let json = item.encode(fiber.runner.config)
        else { return }
        enqueue { [weak self] in
            guard let self else { return }
            do {
                guard self.isRunning, let changed = self.tree.modifying(id, { $0.config = json }) else { return }
                try self.save(changed)
                if let node = self.nodes[id], node.fiber === fiber { node.config = json }
                await self.apply(changed)
            } catch {
                self.ctx.logger("loader").error("cannot save the config entry \"\(id)\" gave itself: \(error)")
            }
        }
    }
}

/// What the Loader runs for one entry: its fiber, and the plugin, config and error it was last given.
@CordisActor
final class EntryNode {
    let id: String
    var fiber: Fiber?
    var plugin: String = ""
    var isGroup = false
    var config: JSONValue = .object(JSONObject())
    /// The entry's `inject` and its effective intercepts (its groups' and its own) as last applied.
    var inject: [Dependency] = []
    var intercepts = JSONObject()
    var error: String?
    /// The entry as last applied (nil before it is first applied), and its group.
    var entry: Entry?
    var parent: String?

    init(id: String) {
        self.id = id
    }
}
