/// A disposer in cordis-ios's spelling: what an effect runs when it is reverted.
public typealias Disposer = @CordisActor () async throws -> Void

/// cordis-ios's spellings of the context's service, effect and realm API, beside this package's own.
extension Context {
    /// The service of `key` as this fiber sees it (cordis-ios's `ctx[Key.self]`): for a service it
    /// injects, the provider pinned while it is loaded; for one it does not inject, the provider its realm
    /// resolves to now, but only when that provider is this fiber itself or one of its ancestors (any
    /// provider for the root context). `get(_:strict:)` reads any provided service without these checks.
    ///
    /// - Throws: `CordisError` `.serviceUnavailable`: `cannot get required service "clock" in inactive
    ///   context` for an injected service while the fiber is not loaded; `cannot get property "clock"
    ///   without inject` for a service it does not inject whose provider is not itself or an ancestor,
    ///   or that is not available.
    public subscript<K: ServiceKey>(_ key: K.Type) -> K.Value {
        get throws { try get(key, property: K.name) }
    }

    /// The value provided for `key` in this context's realm, without the inject checks of `get(_:)`
    /// (cordis-ios's `get(_:strict:)`): with `strict` (the default), only a provider that is available
    /// now (its fiber `active`, its `check` passing); without, any registered one (an ordinary provider
    /// first). Nil when there is none, or when it holds another type.
    ///
    /// `ctx.get(Key.self)` means this one, as in cordis-ios: a plugin reads a service it does not inject;
    /// `ctx[Key.self]` is the checked read.
    public func get<K: ServiceKey>(_ key: K.Type, strict: Bool = true) -> K.Value? {
        let slot = realm(for: K.name).slot(K.name)
        let record = strict ? world.registry.current(slot) : world.registry.visibleRecord(slot)
        return record?.value as? K.Value
    }

    /// Replaces the value of the service of `key` that this context's fiber provides in its realm
    /// (cordis-ios's `set`); consumers get the new value on their next read.
    ///
    /// - Throws: `CordisError` `.serviceUnavailable`: `cannot set property "x" without provide` when
    ///   nothing provides it in this realm, `cannot set property "x" in multiple fibers` when another
    ///   fiber does (cordis-ios's texts).
    public func set<K: ServiceKey>(_ key: K.Type, _ value: K.Value) throws {
        let slot = realm(for: K.name).slot(K.name)
        guard let record = fiber.records.first(where: { $0.slot == slot }) else {
            let other = world.registry.visibleRecord(slot) != nil
            throw CordisError(
                .serviceUnavailable,
                "cannot set property \"\(K.name)\" \(other ? "in multiple fibers" : "without provide")")
        }
        record.value = value
    }

    /// Registers this context's fiber as the provider of `key` in its realm before it has a value
    /// (cordis-ios's `provide(_:)` without one); `set(_:_:)` gives it one. Until then a read finds no
    /// value: `get` returns nil and the subscript throws.
    ///
    /// - Throws: `CordisError` `.duplicateService` when the realm already has an ordinary provider.
    @discardableResult
    public func provide<K: ServiceKey>(_ key: K.Type) throws -> EffectHandle {
        try provide(name: K.name, value: Optional<K.Value>.none as Any, in: fiber.openScope())
    }

    /// Runs `execute` now as an effect of this context's fiber; the disposer it returns (if any) runs when
    /// the effect is reverted (cordis-ios's `ctx.effect(_:sync:)`).
    ///
    /// - Throws: what `execute` throws; `CordisError` `.inactiveEffect` unless the fiber is loading or active.
    @discardableResult
    public func effect(_ label: String = "anonymous", sync execute: () throws -> Disposer?) throws -> EffectHandle {
        try effect(label, scoped: { scope in
            if let disposer = try execute() { try scope.collect(label, disposer) }
        })
    }

    /// Runs `execute` now with a scope of its own, collected as one effect of this context's fiber
    /// (cordis-ios's `ctx.effect(_:scoped:)`). If it throws, what it collected is reverted and the error
    /// rethrown; an `EffectAbortedError` only ends the body, and what it collected stays.
    ///
    /// - Throws: what `execute` throws; `CordisError` `.inactiveEffect` as above.
    @discardableResult
    public func effect(_ label: String = "anonymous", scoped execute: (EffectScope) throws -> Void) throws -> EffectHandle {
        let (handle, scope) = try fiber.openScope().nested(label)
        do {
            try execute(scope)
        } catch is EffectAbortedError {
            return handle
        } catch {
            Task { @CordisActor in await handle.revert() }
            throw error
        }
        return handle
    }

    /// Runs `execute` as a task with a scope of its own, collected as one effect of this context's fiber
    /// (cordis-ios's async `ctx.effect`). `handle.ready()` waits for the body and rethrows its error; a
    /// body that throws is logged and what it collected is reverted. Reverting the effect while the body
    /// runs waits for the body to end: a `collect` it makes meanwhile records its disposer, then throws,
    /// which (like an `EffectAbortedError`) ends the body quietly (nothing logged, `ready()` returns);
    /// then every disposer it collected runs, newest first, as in cordis-ios.
    ///
    /// - Throws: `CordisError` `.inactiveEffect` as above.
    @discardableResult
    public func effect(
        _ label: String = "anonymous", _ execute: @escaping @CordisActor (EffectScope) async throws -> Void
    ) throws -> EffectHandle {
        let (handle, scope) = try fiber.openScope().nested(label)
        let logger = self.logger
        scope.startBody(Task { @CordisActor in
            do {
                try await execute(scope)
            } catch is EffectAbortedError {
            } catch let error as CordisError where error.code == .inactiveEffect && !scope.isOpen {
                // The effect was reverted while its body ran: the body stops at its late `collect`.
            } catch {
                scope.bodyEnded()
                logger.error("effect \(label) of \(logger.name) failed: \(error)")
                await handle.revert()
                throw error
            }
            scope.bodyEnded()
        })
        return handle
    }

    /// Runs `body` as a child plugin only while the services of `keys` are provided, passing it its
    /// context and scope (cordis-ios's `inject` closure).
    @discardableResult
    public func inject(
        _ keys: [any ServiceKey.Type], _ body: @escaping @CordisActor (Context, EffectScope) async throws -> Void
    ) throws -> Fiber {
        try function(inject: keys.map { Dependency(name: $0.name) }) { scope in try await body(scope.ctx, scope) }
    }

    /// The realm this context resolves `name` in when it is isolated, nil in the root realm
    /// (cordis-ios's `realm(of:)`).
    public func realm(of name: String) -> Realm? {
        realms[name]
    }

    /// A new private realm (cordis-ios's `makeRealm(name:)`), for `isolate(_:realm:)`.
    public func makeRealm(name: String) -> Realm {
        .private(world.makeRealmID(), name: name)
    }

    /// A context whose `name` resolves in `realm`, or in a new private realm when `realm` is nil
    /// (cordis-ios's `isolate(_:realm:)`).
    public func isolate(_ name: String, realm: Realm? = nil) -> Context {
        isolated(name, in: realm ?? makeRealm(name: name))
    }

    /// A context whose service of `key` resolves in `realm`, or in a new private realm when it is nil.
    public func isolate<K: ServiceKey>(_ key: K.Type, realm: Realm? = nil) -> Context {
        isolate(K.name, realm: realm)
    }

    /// The root context of this world (cordis-ios's `root`): the last of the `parent` chain.
    public var root: Context {
        var context = self
        while let parent = context.parent { context = parent }
        return context
    }

    /// Whether this is the root context of its world (cordis-ios's `isRoot`).
    public var isRoot: Bool { parent == nil }

    /// A context with the same fiber, realms and intercepts whose `parent` is this one (cordis-ios's
    /// `extend()`): what it creates is an effect of the same fiber.
    public func extend() -> Context {
        Context(fiber: fiber, realms: realms, intercepts: intercepts, parent: self)
    }
}
