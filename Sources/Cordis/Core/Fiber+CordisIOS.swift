import CordisJSON

/// The fiber API cordis-ios's code reads.
extension Fiber {
    /// Replaces the plugin's config and restarts the fiber with it (cordis-ios's `update(_:noSave:)`):
    /// `config` is a value of the plugin's config type, a `JSONValue` (decoded strictly), or nil (the
    /// config decoded from `{}`). With `noSave`, a Loader keeps the entry's saved config as it was.
    ///
    /// Waterfall listeners of `UpdateEvent` on this fiber's contexts (and global ones) run first; one that
    /// does not call `next` vetoes the update.
    ///
    /// - Throws: `CordisError` `.invalidConfig` or `.typeMismatch` (nothing changes
    ///   then), `.disposed`, or the new error if the fiber fails again.
    public func update(_ config: (any Sendable)?, noSave: Bool = false) async throws {
        try ensureNotDisposed()
        let reconfigured: PluginRunner
        switch config {
        case nil:
            reconfigured = try runner.reconfigured(json: .object(JSONObject()))
        case let json as JSONValue:
            reconfigured = try runner.reconfigured(json: json)
        case let value?:
            reconfigured = try runner.reconfigured(value)
        }
        try await replaceRunner(with: reconfigured, noSave: noSave)
    }

    /// The required services this fiber injects that are not provided now, in declaration order: what a
    /// `pending` fiber waits for.
    public var missingInjections: [String] {
        declaredDependencies.filter { !$0.optional && world.registry.current(slot(for: $0.name)) == nil }.map(\.name)
    }

    /// The fiber's id while it is not disposed, nil after (cordis-ios's `uid`).
    public var uid: Int? { state == .disposed ? nil : id }

    /// Throws unless the fiber is still alive (cordis-ios's `assertActive()`: it is not disposed).
    ///
    /// - Throws: `CordisError` `.disposed`.
    public func assertActive() throws {
        try ensureNotDisposed()
    }

    /// The fiber's effects of their own, oldest first (cordis-ios's `getEffects()`): nested effects,
    /// listeners, providers and adopted handles, each with its own such effects; not the disposers
    /// collected with `collect(_:)` nor child fibers, which `effects` also lists.
    public func getEffects() -> [EffectMeta] { scope?.listedEffects ?? [] }

    /// The context the fiber was started from (cordis-ios's `parent`): the one `ctx.plugin` was called on.
    /// For the root fiber, the root context.
    public var parent: Context { startedFrom ?? ctx }

    /// The services the fiber's plugin sees while it is loaded (cordis-ios's `store`), by name: the
    /// provider in use for each service it injects (`providers`), and the services it provides itself;
    /// nil while it is not loaded (`pending`, `failed`, `disposed`).
    public var store: [String: Impl]? {
        guard scope != nil else { return nil }
        var store: [String: Impl] = [:]
        for (service, record) in providerRecords { store[service] = Impl(record) }
        for record in records where store[record.slot.name] == nil { store[record.slot.name] = Impl(record) }
        return store
    }

    /// The transitions in flight (cordis-ios's `inertia`): nil when the fiber is settled (`isSettled`),
    /// else a task that ends once it is. A fiber here has no task per transition (its transitions run one
    /// after another, each change applied when the one in flight ends), so awaiting this task waits for
    /// them all, as cordis-ios's `while let inertia { await inertia.value }` does; awaiting it from the
    /// fiber's own transition waits for ever.
    public var inertia: Task<Void, Never>? {
        guard isDriving else { return nil }
        if let inertiaTask { return inertiaTask }
        let task = Task { await self.settled() }
        inertiaTask = task
        return task
    }

    /// The services the fiber injects, each with the intercept config its context carries for it (cordis-
    /// ios's `inject`): a key for every injected service (`dependencies`), whose value is the config of its
    /// `Injection` (`Plugin.injections`, `FunctionPlugin(injections:)`), nil when it has none.
    public var inject: [String: (any Sendable)?] {
        var inject: [String: (any Sendable)?] = [:]
        for dependency in declaredDependencies {
            inject.updateValue(nil, forKey: dependency.name)
        }
        // The context carries the last config given for a service, as it applies them in order.
        for injection in runner.injections {
            if let config = injection.config { inject[injection.name] = .some(config) }
        }
        return inject
    }
}

/// cordis-ios's name for the description of a collected effect.

extension Fiber {
    /// Runs `execute` now as an effect of this fiber; the disposer it returns, if any, runs when the
    /// effect is disposed (the same as `ctx.effect(_:sync:)` on the fiber's context).
    @discardableResult
    public func effect(_ label: String = "anonymous", sync execute: () throws -> Disposer?) throws -> EffectHandle {
        try ctx.effect(label, sync: execute)
    }

    /// Runs `execute` now with a scope as an effect of this fiber (the same as `ctx.effect(_:scoped:)`).
    @discardableResult
    public func effect(_ label: String = "anonymous", scoped execute: (EffectScope) throws -> Void) throws -> EffectHandle {
        try ctx.effect(label, scoped: execute)
    }

    /// Runs `execute` as a task on `CordisActor`, an effect of this fiber (the same as `ctx.effect(_:_:)`).
    @discardableResult
    public func effect(
        _ label: String = "anonymous",
        _ execute: @escaping @CordisActor (EffectScope) async throws -> Void
    ) throws -> EffectHandle {
        try ctx.effect(label, execute)
    }
}
