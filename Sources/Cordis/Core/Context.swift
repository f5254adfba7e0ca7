import CordisJSON

/// A fiber's view of the plugin world: where it creates child plugins, provides and reads services,
/// listens to events and logs. Everything it creates is an effect of its fiber.
///
/// `Context()` makes a new world with its root fiber (always `active`). Each plugin's fiber has its
/// own context; `isolate` derives a context whose services resolve in another realm.
/// All members are isolated to `CordisActor`.
@CordisActor
public final class Context {
    /// The fiber whose effects this context records.
    public let fiber: Fiber
    let realms: [String: Realm]
    /// The intercept configs this context carries, by service name (see `intercept(_:_:)`).
    let intercepts: [String: Any]
    /// Keeps the root fiber alive for as long as the root context is.
    private let ownedRoot: Fiber?
    /// The context this one was derived from (cordis-ios's `parent`): the one `isolate`, `intercept` or
    /// `extend` was called on, or, for a plugin's own context, the one its plugin was started from. Nil
    /// for the root context of a world. A Loader moving an entry between groups moves its fiber, and
    /// then its own context's `parent`, under the new group.
    public internal(set) var parent: Context?

    var world: World { fiber.world }

    /// Creates a new plugin world and returns its root context.
    ///
    /// - Parameters:
    ///   - logLevel: the least severe level the default stderr exporter prints (`warn`).
    ///   - recentLevel: the least severe level `recentLogs` keeps (every record by default).
    ///   - clock: the clock the world's own waits run on (the delay before a fiber whose load failed
    ///     with `withdrawn` tries again); a test can pass one it advances itself.
    public convenience init(
        logLevel: LogLevel = .warn, recentLevel: LogLevel = .debug, clock: any Clock<Duration> = ContinuousClock()
    ) {
        let logs = LogHub(recentLevel: recentLevel)
        let world = World(logs: logs, clock: clock)
        let runner = PluginRunner.forFunction(name: "root", dependencies: [], config: EmptyConfig()) { _, _ in }
        let root = Fiber(id: world.makeFiberID(), world: world, runner: runner, parent: nil, state: .active)
        world.remember(root)
        self.init(fiber: root, realms: [:], owning: root)
        root.attach(context: self, strongly: false)
        root.beginRootLife()
        logs.addDefaultExporter(StderrLogExporter(level: logLevel))
    }

    init(
        fiber: Fiber, realms: [String: Realm], intercepts: [String: Any] = [:], parent: Context? = nil,
        owning root: Fiber? = nil
    ) {
        self.fiber = fiber
        self.realms = realms
        self.intercepts = intercepts
        self.parent = parent
        self.ownedRoot = root
    }

    /// The realm in which `service` resolves from this context.
    public func realm(for service: String) -> Realm {
        realms[service] ?? .root
    }

    // MARK: - Plugins

    /// Starts a plugin of type `P` with `config` as a child of this context's fiber, and returns its fiber.
    ///
    /// The fiber is `pending` until every service `P` injects is provided; it is an effect of this
    /// context's fiber (disposed when that fiber unloads). Await `fiber.await()` for it to settle.
    /// - Throws: `CordisError` `.invalidConfig` when `P.validate` refuses `config`; `.inactiveEffect` if
    ///   this context's fiber is not loading or active.
    @discardableResult
    public func plugin<P: Plugin>(_ type: P.Type, config: P.Config) throws -> Fiber {
        try spawn(PluginRunner.forType(P.self, config: P.validated(config)))
    }

    /// Starts a plugin of type `P` with its default config (decoded from `{}`).
    ///
    /// - Throws: `CordisError` `.invalidConfig` when `P.Config` needs fields; `.inactiveEffect` as above.
    @discardableResult
    public func plugin<P: Plugin>(_ type: P.Type) throws -> Fiber {
        let config = try ConfigDecoding.decode(P.Config.self, from: .object([:]), plugin: P.name)
        return try plugin(P.self, config: config)
    }

    /// Starts a plugin of type `P` with a JSON config, decoded strictly (unknown keys and wrong types
    /// are errors naming their path).
    @available(*, deprecated, message: "write plugin(PluginType(P.self), rawConfig: json)")
    @discardableResult
    public func plugin<P: Plugin>(_ type: P.Type, json: JSONValue) throws -> Fiber {
        let config = try ConfigDecoding.decode(P.Config.self, from: json, plugin: P.name)
        return try plugin(P.self, config: config)
    }

    /// Starts a function plugin: `apply` runs whenever the fiber loads, with a scope for its effects.
    /// Without a `name`, the fiber is named after this context's fiber (as cordis-ios names an unnamed
    /// plugin after its nearest named ancestor, `root` at the top).
    @available(*, deprecated, message: "write plugin(FunctionPlugin<NoConfig>(name:inject:) { ctx, _, scope in … })")
    @discardableResult
    public func plugin(
        name: String? = nil, inject: [Dependency] = [],
        _ apply: @escaping @CordisActor (EffectScope) async throws -> Void
    ) throws -> Fiber {
        try function(name: name, inject: inject, apply)
    }

    /// Starts a function plugin with a typed config, passed to `apply` on every load; named as above.
    @available(*, deprecated, message: "write plugin(FunctionPlugin<Config>(name:inject:) { ctx, config, scope in … }, config:)")
    @discardableResult
    public func plugin<C: Decodable>(
        name: String? = nil, inject: [Dependency] = [], config: C,
        _ apply: @escaping @CordisActor (EffectScope, C) async throws -> Void
    ) throws -> Fiber {
        try spawn(PluginRunner.forFunction(name: name ?? PluginRunner.unnamed, dependencies: inject, config: config, apply: apply))
    }

    /// Starts an unnamed-by-default function plugin without a config: the runtime's own plugins (a
    /// Loader group, a node's proxy of a remote service).
    @discardableResult
    package func function(
        name: String? = nil, inject: [Dependency] = [],
        _ apply: @escaping @CordisActor (EffectScope) async throws -> Void
    ) throws -> Fiber {
        try spawn(PluginRunner.forFunction(name: name ?? PluginRunner.unnamed, dependencies: inject, config: EmptyConfig()) { scope, _ in
            try await apply(scope)
        })
    }

    /// Runs `apply` as a child plugin only while the services of `keys` are provided.
    @available(*, deprecated, message: "write inject(keys) { ctx, scope in … }; name a plugin with FunctionPlugin(name:)")
    @discardableResult
    public func inject(
        _ keys: [any ServiceKey.Type], name: String? = nil,
        _ apply: @escaping @CordisActor (EffectScope) async throws -> Void
    ) throws -> Fiber {
        try function(name: name, inject: keys.map { Dependency(name: $0.name) }, apply)
    }

    /// Starts `runner` as a child plugin whose fiber also injects `extra` (a Loader entry's `inject`).
    func spawn(_ runner: PluginRunner, injecting extra: [Dependency]) throws -> Fiber {
        try spawn(runner.injecting(extra))
    }

    func spawn(_ runner: PluginRunner) throws -> Fiber {
        let owner = try fiber.openScope()
        let child = Fiber(id: world.makeFiberID(), world: world, runner: runner, parent: self, state: .pending)
        let context = Context(fiber: child, realms: realms, intercepts: intercepts, parent: self)
        child.attach(context: context, strongly: true)
        child.logFields = fiber.logFields
        world.remember(child)
        // Unowned, not weak: the world holds the child until it is disposed, and disposing it detaches this
        // handle (dropping the closure) first, so the closure never runs after the child is gone. A weak
        // reference would give every fiber a side table, and every retain of it a trip there.
        child.parentHandle = try owner.collect("ctx.plugin()") { [unowned child] in
            await child.dispose(reason: .parent)
        }
        for dependency in runner.dependencies {
            world.registry.addDependent(child, on: context.realm(for: dependency.name).slot(dependency.name))
        }
        world.events.emitInternal(.fiberChanged, child)
        child.schedule()
        return child
    }

    // MARK: - Realms

    /// A context whose `service` resolves in a new realm private to it.
    @available(*, deprecated, message: "write isolate(service, realm: nil)")
    @_disfavoredOverload
    public func isolate(_ service: String) -> Context {
        isolated(service, in: makeRealm(name: service))
    }

    /// A context whose `service` resolves in the shared realm `label`.
    @available(*, deprecated, message: "write isolate(service, realm: .label(label))")
    public func isolate(_ service: String, label: String) -> Context {
        isolated(service, in: .label(label))
    }

    /// A context whose `service` resolves in `realm`.
    @available(*, deprecated, renamed: "isolate(_:realm:)")
    public func isolate(_ service: String, in realm: Realm) -> Context {
        isolated(service, in: realm)
    }

    /// A context whose `service` resolves in `realm` (`.root` undoes an isolation).
    func isolated(_ service: String, in realm: Realm) -> Context {
        var realms = self.realms
        realms[service] = realm == .root ? nil : realm
        return Context(fiber: fiber, realms: realms, intercepts: intercepts, parent: self)
    }

    // MARK: - Services

    /// Provides `value` as the service of `key` in this context's realm, as an effect of its fiber.
    ///
    /// The service counts while the fiber is `active` and `check` (if any) returns true. Disposing the
    /// returned handle withdraws it; consumers unload before the withdrawal completes.
    /// - Throws: `CordisError` `.duplicateService` when the realm already has an ordinary provider.
    @discardableResult
    public func provide<K: ServiceKey>(_ key: K.Type, _ value: K.Value) throws -> EffectHandle {
        try provide(name: K.name, value: value, in: fiber.openScope())
    }

    /// Provides `value` as the service of `key`, available only while `check` returns true (cordis's
    /// `Service.check`). `check` is asked when the slot changes and when `recheck(_:)` is called.
    @discardableResult
    public func provide<K: ServiceKey>(
        _ key: K.Type, _ value: K.Value, check: @escaping @CordisActor () -> Bool
    ) throws -> EffectHandle {
        try provide(name: K.name, value: value, in: fiber.openScope(), check: check)
    }

    /// Asks the providers of `key` in this context's realm their `check` again; consumers follow the
    /// answer (a provider that stops passing unloads its consumers to `pending`).
    public func recheck<K: ServiceKey>(_ key: K.Type) {
        world.registry.refresh(realm(for: K.name).slot(K.name))
    }

    /// Provides a service by name, `value` being what the service's key would hold, as an effect of this
    /// context's fiber (see `provide(_:_:)`).
    ///
    /// - Throws: `CordisError` `.duplicateService` when the realm already has an ordinary provider.
    @discardableResult
    public func provide(name: String, value: Any) throws -> EffectHandle {
        try provide(name: name, value: value, in: fiber.openScope(), fallbackRank: nil)
    }

    /// Provides a service by name: `fallbackRank` non-nil makes it a fallback provider (a remote proxy),
    /// which never counts as a duplicate and serves only while the realm has no ordinary provider; the
    /// lowest rank is chosen first, and consumers stay with a fallback until it leaves.
    @discardableResult
    package func provide(name: String, value: Any, fallbackRank: String?) throws -> EffectHandle {
        try provide(name: name, value: value, in: fiber.openScope(), fallbackRank: fallbackRank)
    }

    @discardableResult
    func provide(
        name: String, value: Any, in scope: EffectScope, fallbackRank: String? = nil,
        check: (@CordisActor () -> Bool)? = nil
    ) throws -> EffectHandle {
        try scope.ensureOpen()
        let slot = realm(for: name).slot(name)
        let record = try world.registry.add(
            slot: slot, fiber: fiber, value: value, fallbackRank: fallbackRank, check: check)
        fiber.register(record)
        let registry = world.registry
        let owner = fiber
        // Neither waits nor throws: reverted without an `await`, so a provider's teardown takes no extra turn.
        return try scope.collectImmediate("ctx.provide(\"\(name)\")") {
            owner.unregister(record)
            registry.remove(record)
        }
    }

    /// The service of `key` as this fiber sees it: for a service it injects, the provider pinned while
    /// it is loaded; for one it does not inject, the provider its realm resolves to now, but only when
    /// that provider is this fiber itself or one of its ancestors (any provider for the root context).
    /// To read any provided service without these checks, use `get(_:strict:)`.
    ///
    /// - Throws: `CordisError` `.serviceUnavailable`: `cannot get required service "clock" in inactive
    ///   context` for an injected service while the fiber is not loaded; `cannot get property "clock"
    ///   without inject` for a service it does not inject whose provider is not itself or an ancestor,
    ///   or that is not available.
    ///
    /// Deprecated: cordis-ios's `ctx[Key.self]` is the checked read, and `ctx.get(Key.self)` is its
    /// optional one (`get(_:strict:)`); this throwing form is chosen only where a value is required.
    @_disfavoredOverload
    @available(*, deprecated, renamed: "subscript(_:)", message: "use ctx[Key.self], as in cordis-ios")
    public func get<K: ServiceKey>(_ key: K.Type) throws -> K.Value {
        try get(key, property: K.name)
    }

    /// Like `get(_:)`, naming `property` (the `@Inject` property) in the error.
    public func get<K: ServiceKey>(_ key: K.Type, property: String) throws -> K.Value {
        let record: ProviderRecord
        if let pinned = fiber.pinned(K.name) {
            record = pinned
        } else if fiber.declaredDependencies.contains(where: { $0.name == K.name }) {
            throw CordisError(.serviceUnavailable, "cannot get required service \"\(property)\" in inactive context")
        } else if let live = world.registry.current(realm(for: K.name).slot(K.name)),
                  fiber.isRoot || isOwnOrAncestor(live.fiber) {
            record = live
        } else {
            throw CordisError(.serviceUnavailable, "cannot get property \"\(property)\" without inject")
        }
        guard let value = record.value as? K.Value else {
            throw CordisError(
                .typeMismatch, "service \"\(K.name)\" holds a \(type(of: record.value)), not a \(K.Value.self)")
        }
        return value
    }

    /// Whether the service of `key` is provided and available in this context's realm now.
    public func has<K: ServiceKey>(_ key: K.Type) -> Bool {
        world.registry.current(realm(for: K.name).slot(K.name)) != nil
    }

    private func isOwnOrAncestor(_ candidate: Fiber) -> Bool {
        var current: Fiber? = fiber
        var depth = 0
        while let node = current, depth < 10_000 {
            if node === candidate { return true }
            current = node.startedFromFiber
            depth += 1
        }
        return false
    }

    // MARK: - Logs

    /// A logger named after the nearest `LoggerIntercept` name, else this context's plugin, at the
    /// nearest `LoggerIntercept` level.
    public var logger: Logger { makeLogger(named: nil) }

    /// A logger with an explicit name, at the nearest `LoggerIntercept` level.
    public func logger(_ name: String) -> Logger { makeLogger(named: name) }

    private func makeLogger(named explicitName: String?) -> Logger {
        let intercept: LoggerIntercept.Config?
        do {
            intercept = try intercepted(LoggerIntercept.self)
        } catch {
            intercept = nil
            Logger(name: fiber.name, hub: world.logs, fiberID: fiber.id, fields: fiber.logFields).error("\(error)")
        }
        let name = explicitName ?? intercept?.name ?? fiber.name
        var logger = Logger(name: name, hub: world.logs, fiberID: fiber.id, fields: fiber.logFields, level: intercept?.level)
        logger.addTarget = { [weak self] target in
            guard let self else {
                throw CordisError(.inactiveEffect, "logger \(name): its context is gone")
            }
            return try self.exportLogs(to: target)
        }
        return logger
    }

    /// Adds a `CordisActor` log exporter as an effect of this context's fiber: it receives every
    /// message at or above its level (this context's logger level when nil) until the fiber unloads.
    @available(*, deprecated, message: "write logger.exporter(exporter)")
    @discardableResult
    public func exportLogs(to exporter: any LogExporter) throws -> EffectHandle {
        try exportLogs(to: .exporter(exporter))
    }

    /// Adds a thread-safe log sink as an effect of this context's fiber: it receives every record at or
    /// above its level, on the logging thread, until the fiber unloads.
    @available(*, deprecated, message: "write logger.exporter(sink)")
    @discardableResult
    public func exportLogs(to sink: any LogSink) throws -> EffectHandle {
        try exportLogs(to: .sink(sink))
    }

    func exportLogs(to target: LogTarget) throws -> EffectHandle {
        let scope = try fiber.openScope()
        let logs = world.logs
        let token: LogHub.Token
        switch target {
        case .sink(let sink): token = logs.add(sink)
        case .exporter(let exporter): token = logs.add(exporter)
        }
        do {
            return try scope.collectEffect("ctx.logger.exporter()") { logs.remove(token) }
        } catch {
            logs.remove(token)
            throw error
        }
    }

    /// The recent log records kept in memory (the last thousand, or `logger.bufferSize`, at or above the
    /// level given at creation, oldest first).
    public var recentLogs: [LogMessage] { world.logs.recent }

    // MARK: - Inspection

    /// Every live fiber of this world, by id.
    public var fibers: [Fiber] { world.fibers.fibers }

    /// Waits until no fiber of this world has a transition in flight.
    public func settled() async {
        await world.quiescence()
    }

    /// The provider a service resolves to in a realm now, if any.
    @available(*, deprecated, message: "read reflect.store (the provider of each service slot)")
    public func provider(of service: String, in realm: Realm = .root) -> ProviderRecord? {
        currentProvider(of: service, in: realm)
    }

    /// Every provider registered in every slot (available or not).
    @available(*, deprecated, message: "read reflect.store (the provider of each service slot)")
    public var providerRecords: [ProviderRecord] { allProviderRecords }

    /// Every provider registered in one slot (available or not), oldest first: what an
    /// `internal/service` event for that slot is about.
    @available(*, deprecated, message: "read reflect.store (the provider of each service slot)")
    public func providerRecords(in slot: ServiceSlot) -> [ProviderRecord] {
        registeredProviders(in: slot)
    }

    /// The provider a service resolves to in a realm now, if any.
    package func currentProvider(of service: String, in realm: Realm = .root) -> ProviderRecord? {
        world.registry.current(realm.slot(service))
    }

    /// Every provider registered in every slot (available or not).
    package var allProviderRecords: [ProviderRecord] {
        world.registry.providedSlots.flatMap { world.registry.records($0) }
    }

    /// Every provider registered in one slot (available or not), oldest first: what an
    /// `internal/service` event for that slot is about.
    package func registeredProviders(in slot: ServiceSlot) -> [ProviderRecord] {
        world.registry.records(slot)
    }
}

extension Realm {
    func slot(_ name: String) -> ServiceSlot { ServiceSlot(name: name, realm: self) }
}

extension Context: CustomStringConvertible {
    /// `Context <plugin name>`, as cordis prints it.
    public nonisolated var description: String { "Context <\(fiber.name)>" }
}
