/// Events: listeners are effects of the context's fiber; emission modes follow cordis.
extension Context {
    /// Listens to `event` until this context's fiber unloads (or the handle is disposed).
    ///
    /// - Parameter global: receive service-scoped emissions from every realm.
    /// - Throws: `cannot create effect on inactive context` when the fiber is not loading or active.
    @available(*, deprecated, message: "declare the event as an EventKey and listen with on(Key.self, options:)")
    @discardableResult
    public func on<P, R>(
        _ event: Event<P, R>, global: Bool = false, _ listener: @escaping @CordisActor (P) throws -> R
    ) throws -> EffectHandle {
        try onValue(event, global: global, listener)
    }

    /// Listens to an event named by a value (the runtime's own events).
    func onValue<P, R>(
        _ event: Event<P, R>, global: Bool = false, _ listener: @escaping @CordisActor (P) throws -> R
    ) throws -> EffectHandle {
        try listen(event.name, body: listener, isAsync: false, global: global)
    }

    /// Listens to `event` with an `async` listener: `emit` starts it without waiting; `parallel` and
    /// `serial` await it.
    @available(*, deprecated, message: "declare the event as an EventKey and listen with an async on(Key.self, options:)")
    @discardableResult
    public func onAsync<P, R>(
        _ event: Event<P, R>, global: Bool = false, _ listener: @escaping @CordisActor (P) async throws -> R
    ) throws -> EffectHandle {
        try listen(event.name, body: listener, isAsync: true, global: global)
    }

    /// Listens to `event` once: the listener is removed before it runs.
    @available(*, deprecated, message: "declare the event as an EventKey and listen with once(Key.self)")
    @discardableResult
    public func once<P, R>(_ event: Event<P, R>, _ listener: @escaping @CordisActor (P) throws -> R) throws -> EffectHandle {
        try onceValue(event, listener)
    }

    /// `once` for an event named by a value.
    func onceValue<P, R>(_ event: Event<P, R>, _ listener: @escaping @CordisActor (P) throws -> R) throws -> EffectHandle {
        let registration = OnceRegistration()
        let bus = world.events
        let name = event.name
        let body: @CordisActor (P) throws -> R = { payload in
            // Leave the bus and the fiber's effects before running, so a re-entrant emit skips it.
            if let registered = registration.listener { bus.remove(name, registered) }
            registration.handle?.detach()
            registration.listener = nil
            registration.handle = nil
            return try listener(payload)
        }
        let (handle, registered) = try register(name, body: body, isAsync: false, global: false)
        registration.handle = handle
        registration.listener = registered
        return handle
    }

    /// Listens to a waterfall event; the listener decides whether to call `next`.
    @available(*, deprecated, message: "declare the event as an EventKey and listen with a waterfall on(Key.self) { args, next in … }")
    @discardableResult
    public func on<P, R>(
        _ event: WaterfallEvent<P, R>, _ listener: @escaping @CordisActor (P, Next<R>) throws -> R
    ) throws -> EffectHandle {
        try listen(event.name, body: listener, isAsync: false, global: false)
    }

    func listen(_ name: String, body: Any, isAsync: Bool, global: Bool, prepend: Bool = false) throws -> EffectHandle {
        try register(name, body: body, isAsync: isAsync, global: global, prepend: prepend).handle
    }

    func register(
        _ name: String, body: Any, isAsync: Bool, global: Bool, prepend: Bool = false
    ) throws -> (handle: EffectHandle, listener: EventBus.Listener) {
        let scope = try fiber.openScope()
        let bus = world.events
        let listener = bus.add(
            name, body: body, isAsync: isAsync, global: global, realms: realms, prepend: prepend, context: self)
        do {
            let handle = try scope.collectEffect("ctx.on(\"\(name)\")") { bus.remove(name, listener) }
            return (handle, listener)
        } catch {
            bus.remove(name, listener)
            throw error
        }
    }


    /// Calls every listener in order, synchronously; `async` listeners are started, not awaited.
    ///
    /// - Parameter service: scope the emission to listeners that resolve this service in the same
    ///   realm as this context (and global listeners).
    /// - Throws: the first error a synchronous listener throws (the rest are skipped).
    @available(*, deprecated, message: "declare the event as an EventKey and call emit(Key.self, args) or emit(scope:_:_:)")
    public func emit<P, R>(_ event: Event<P, R>, _ payload: P, service: (any ServiceKey.Type)? = nil) throws {
        try emit(event, payload, filter: scopeFilter(service))
    }

    /// `emit` to the listeners `filter` admits.
    func emit<P, R>(_ event: Event<P, R>, _ payload: P, filter: EventBus.Filter) throws {
        for listener in world.events.snapshot(event.name, filter) {
            if let body = listener.body as? @CordisActor (P) throws -> R {
                _ = try body(payload)
            } else if let body = listener.body as? @CordisActor (P) async throws -> R {
                let logger = self.logger
                Task {
                    do { _ = try await body(payload) } catch { logger.error("listener of \(event.name) failed: \(error)") }
                }
            }
        }
    }

    /// Calls every listener concurrently and waits for all of them.
    ///
    /// - Throws: the first error a listener throws (the others still finish).
    @available(*, deprecated, message: "declare the event as an EventKey and call parallel(Key.self, args) or parallel(scope:_:_:)")
    public func parallel<P, R>(_ event: Event<P, R>, _ payload: P, service: (any ServiceKey.Type)? = nil) async throws {
        if let firstError = await parallelErrors(event, payload, scopeFilter(service)).first { throw firstError }
    }

    /// Runs every listener `filter` admits concurrently and returns the errors they threw, in
    /// registration order, once all of them have finished.
    func parallelErrors<P, R>(_ event: Event<P, R>, _ payload: P, _ filter: EventBus.Filter) async -> [any Error] {
        let listeners = world.events.snapshot(event.name, filter)
        var tasks: [Task<Void, any Error>] = []
        for listener in listeners {
            if let body = listener.body as? @CordisActor (P) throws -> R {
                tasks.append(Task { _ = try body(payload) })
            } else if let body = listener.body as? @CordisActor (P) async throws -> R {
                tasks.append(Task { _ = try await body(payload) })
            }
        }
        var errors: [any Error] = []
        for task in tasks {
            do { try await task.value } catch { errors.append(error) }
        }
        return errors
    }

    /// Calls listeners one after another, awaiting each; returns the first non-nil result (and stops).
    @available(*, deprecated, message: "declare the event as an EventKey and call serial(Key.self, args) or serial(scope:_:_:)")
    public func serial<P, R>(_ event: Event<P, R?>, _ payload: P, service: (any ServiceKey.Type)? = nil) async throws -> R? {
        try await serial(event, payload, filter: scopeFilter(service))
    }

    /// `serial` over the listeners `filter` admits.
    func serial<P, R>(_ event: Event<P, R?>, _ payload: P, filter: EventBus.Filter) async throws -> R? {
        for listener in world.events.snapshot(event.name, filter) {
            if let body = listener.body as? @CordisActor (P) throws -> R? {
                if let result = try body(payload) { return result }
            } else if let body = listener.body as? @CordisActor (P) async throws -> R? {
                if let result = try await body(payload) { return result }
            }
        }
        return nil
    }

    /// Calls synchronous listeners one after another; returns the first non-nil result (and stops).
    @available(*, deprecated, message: "declare the event as an EventKey and call bail(Key.self, args) or bail(scope:_:_:)")
    public func bail<P, R>(_ event: Event<P, R?>, _ payload: P, service: (any ServiceKey.Type)? = nil) throws -> R? {
        for listener in world.events.snapshot(event.name, scopeFilter(service)) {
            if let body = listener.body as? @CordisActor (P) throws -> R?, let result = try body(payload) {
                return result
            }
        }
        return nil
    }

    /// Runs a waterfall: the first listener gets the payload and a `next` that runs the second, and so
    /// on; after the last listener, `next` runs `final`. A listener that does not call `next` stops the
    /// chain. Each `next` may be called once.
    @available(*, deprecated, message: "declare the event as an EventKey and call waterfall(Key.self, args) { … }")
    public func waterfall<P, R>(_ event: WaterfallEvent<P, R>, _ payload: P, final: @escaping @CordisActor () throws -> R) throws -> R {
        let listeners = world.events.snapshot(event.name, .all).compactMap {
            $0.body as? @CordisActor (P, Next<R>) throws -> R
        }
        func step(_ index: Int) throws -> R {
            guard index < listeners.count else { return try final() }
            return try listeners[index](payload, Next { try step(index + 1) })
        }
        return try step(0)
    }

    func scopeFilter(_ service: (any ServiceKey.Type)?) -> EventBus.Filter {
        guard let service else { return .all }
        return EventBus.Filter(service: service.name, realm: realm(for: service.name))
    }

    /// How many listeners each event has now.
    package var listenerCounts: [String: Int] { world.events.counts }
}

/// The rest of a waterfall, callable once.
@CordisActor
public final class Next<R> {
    private var body: (@CordisActor () throws -> R)?

    init(_ body: @escaping @CordisActor () throws -> R) {
        self.body = body
    }

    /// Runs the rest of the chain.
    ///
    /// - Throws: `next() called multiple times` on a second call; whatever the chain throws.
    public func callAsFunction() throws -> R {
        guard let body else { throw CordisError(.nextCalledMultipleTimes, "next() called multiple times") }
        self.body = nil
        return try body()
    }
}

/// What a `once` listener needs to remove itself when it fires.
@CordisActor
private final class OnceRegistration {
    var handle: EffectHandle?
    var listener: EventBus.Listener?
}

extension Context {
    /// Listens to `internal/service` with the slot whose provider changed, name and realm (the node's
    /// exports follow it); `ServiceEvent` gives the name and value only.
    @discardableResult
    package func onServiceSlot(_ listener: @escaping @CordisActor (ServiceSlot) throws -> Void) throws -> EffectHandle {
        try onValue(.slotChanged, listener)
    }
}
