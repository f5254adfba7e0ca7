/// A typed event name in cordis-ios's form: listeners get `Args`; `onBail` listeners may return a
/// `Result` that stops `serial`/`bail` (use `Never` for an event that never bails).
///
/// ```swift
/// enum Greeted: EventKey {
///   typealias Args = String
///   typealias Result = Never
///   static let name = "greeted"
/// }
/// ```
/// Events named by an `EventKey` reach the listeners registered with the same key (`on`, `onBail`,
/// `once`); this package's `Event<Payload, Result>` values are a separate spelling with their own
/// listeners.
public protocol EventKey {
    /// What listeners receive.
    associatedtype Args
    /// What a bailing listener may return.
    associatedtype Result = Void
    /// The event's name.
    static var name: String { get }
}

/// How `ctx.on(Key.self, options:)` registers a listener (cordis-ios's `EventOptions`).
public struct EventOptions: Sendable, Hashable {
    /// Run before the listeners registered earlier.
    public var prepend: Bool
    /// Receive emissions scoped to a service from every realm.
    public var global: Bool

    /// Creates options; by default a listener runs after the earlier ones, in its own realm only.
    public init(prepend: Bool = false, global: Bool = false) {
        self.prepend = prepend
        self.global = global
    }
}

/// Events by `EventKey` (cordis-ios's spelling). Every listener of a key is held in the bailing shape
/// (`K.Args` to `K.Result?`): one registered with `on` returns nil, so `serial` and `bail` pass it by.
extension Context {
    /// The event of `key` as this package's `Event`, in the shape its listeners are held.
    private func event<K: EventKey>(_ key: K.Type) -> Event<K.Args, K.Result?> { Event(named: K.name) }

    /// Listens to `key` until this context's fiber unloads (or the handle is disposed); the listener
    /// never bails.
    ///
    /// - Throws: `cannot create effect on inactive context` when the fiber is not loading or active.
    @discardableResult
    public func on<K: EventKey>(
        _ key: K.Type, options: EventOptions = EventOptions(), _ listener: @escaping @CordisActor (K.Args) throws -> Void
    ) throws -> EffectHandle {
        let body: @CordisActor (K.Args) throws -> K.Result? = { args in
            try listener(args)
            return nil
        }
        return try listen(K.name, body: body, isAsync: false, global: options.global, prepend: options.prepend)
    }

    /// Listens to `key` with an `async` listener: `emit` starts it without waiting; `parallel`, `serial`
    /// and `bail` await it.
    @discardableResult
    public func on<K: EventKey>(
        _ key: K.Type, options: EventOptions = EventOptions(),
        _ listener: @escaping @CordisActor (K.Args) async throws -> Void
    ) throws -> EffectHandle {
        let body: @CordisActor (K.Args) async throws -> K.Result? = { args in
            try await listener(args)
            return nil
        }
        return try listen(K.name, body: body, isAsync: true, global: options.global, prepend: options.prepend)
    }

    /// Listens to `key` with a listener that may bail: a non-nil result stops `serial` and `bail` and is
    /// returned to the caller.
    @discardableResult
    public func onBail<K: EventKey>(
        _ key: K.Type, options: EventOptions = EventOptions(),
        _ listener: @escaping @CordisActor (K.Args) throws -> K.Result?
    ) throws -> EffectHandle {
        try listen(K.name, body: listener, isAsync: false, global: options.global, prepend: options.prepend)
    }

    /// An `async` listener that may bail, as `onBail(_:options:_:)`.
    @discardableResult
    public func onBail<K: EventKey>(
        _ key: K.Type, options: EventOptions = EventOptions(),
        _ listener: @escaping @CordisActor (K.Args) async throws -> K.Result?
    ) throws -> EffectHandle {
        try listen(K.name, body: listener, isAsync: true, global: options.global, prepend: options.prepend)
    }

    /// Listens to the first emission of `key` only.
    @discardableResult
    public func once<K: EventKey>(
        _ key: K.Type, options: EventOptions = EventOptions(), _ listener: @escaping @CordisActor (K.Args) throws -> Void
    ) throws -> EffectHandle {
        try onceValue(event(key)) { args in
            try listener(args)
            return nil
        }
    }

    /// Calls every listener of `key` in order, synchronously; `async` ones are started, not awaited.
    ///
    /// - Throws: the first error a synchronous listener throws.
    public func emit<K: EventKey>(_ key: K.Type, _ args: K.Args) throws {
        try emit(event(key), args, filter: .all)
    }

    /// `emit(_:_:)` for an event without arguments.
    public func emit<K: EventKey>(_ key: K.Type) throws where K.Args == Void {
        try emit(event(key), (), filter: .all)
    }

    /// `emit(_:_:)` to the listeners `scope` admits (cordis-ios's `emit(scope:_:_:)`); nil admits all.
    public func emit<K: EventKey>(scope: (any EventScope)?, _ key: K.Type, _ args: K.Args) throws {
        try emit(event(key), args, filter: filter(scope))
    }

    /// `emit(scope:_:_:)` for an event without arguments.
    public func emit<K: EventKey>(scope: (any EventScope)?, _ key: K.Type) throws where K.Args == Void {
        try emit(event(key), (), filter: filter(scope))
    }

    /// Calls every listener of `key` concurrently and waits for all of them (cordis-ios's `parallel`).
    ///
    /// - Throws: `AggregateError` with every error the listeners threw (one or more), once all have
    ///   finished; a failing listener does not stop the others.
    public func parallel<K: EventKey>(_ key: K.Type, _ args: K.Args) async throws {
        try await parallel(scope: nil, key, args)
    }

    /// `parallel(_:_:)` for an event without arguments.
    public func parallel<K: EventKey>(_ key: K.Type) async throws where K.Args == Void {
        try await parallel(scope: nil, key, ())
    }

    /// `parallel(_:_:)` over the listeners `scope` admits; nil admits all.
    ///
    /// - Throws: `AggregateError` as `parallel(_:_:)`.
    public func parallel<K: EventKey>(scope: (any EventScope)?, _ key: K.Type, _ args: K.Args) async throws {
        let errors = await parallelErrors(event(key), args, filter(scope))
        if !errors.isEmpty { throw AggregateError(errors: errors) }
    }

    /// `parallel(scope:_:_:)` for an event without arguments.
    public func parallel<K: EventKey>(scope: (any EventScope)?, _ key: K.Type) async throws where K.Args == Void {
        try await parallel(scope: scope, key, ())
    }

    /// Calls the listeners of `key` one after another, awaiting each; returns the first non-nil result.
    @discardableResult
    public func serial<K: EventKey>(_ key: K.Type, _ args: K.Args) async throws -> K.Result? {
        try await serial(event(key), args, filter: .all)
    }

    /// `serial(_:_:)` for an event without arguments.
    @discardableResult
    public func serial<K: EventKey>(_ key: K.Type) async throws -> K.Result? where K.Args == Void {
        try await serial(event(key), (), filter: .all)
    }

    /// `serial(_:_:)` over the listeners `scope` admits; nil admits all.
    @discardableResult
    public func serial<K: EventKey>(scope: (any EventScope)?, _ key: K.Type, _ args: K.Args) async throws -> K.Result? {
        try await serial(event(key), args, filter: filter(scope))
    }

    /// `serial(scope:_:_:)` for an event without arguments.
    @discardableResult
    public func serial<K: EventKey>(scope: (any EventScope)?, _ key: K.Type) async throws -> K.Result?
    where K.Args == Void {
        try await serial(event(key), (), filter: filter(scope))
    }

    /// The same as `serial(_:_:)` (cordis-ios's `bail`, which awaits `async` listeners too).
    @discardableResult
    public func bail<K: EventKey>(_ key: K.Type, _ args: K.Args) async throws -> K.Result? {
        try await serial(event(key), args, filter: .all)
    }

    /// `bail(_:_:)` for an event without arguments.
    @discardableResult
    public func bail<K: EventKey>(_ key: K.Type) async throws -> K.Result? where K.Args == Void {
        try await serial(event(key), (), filter: .all)
    }

    /// `bail(_:_:)` over the listeners `scope` admits; nil admits all.
    @discardableResult
    public func bail<K: EventKey>(scope: (any EventScope)?, _ key: K.Type, _ args: K.Args) async throws -> K.Result? {
        try await serial(event(key), args, filter: filter(scope))
    }

    /// `bail(scope:_:_:)` for an event without arguments.
    @discardableResult
    public func bail<K: EventKey>(scope: (any EventScope)?, _ key: K.Type) async throws -> K.Result?
    where K.Args == Void {
        try await serial(event(key), (), filter: filter(scope))
    }

    /// Listens to `key` as a waterfall (cordis-ios's waterfall `on`): the listener gets the arguments and
    /// a `next` that runs the later listeners and then the caller's terminal, and returns the result.
    /// Not calling `next` stops the chain; calling it twice throws `next() called multiple times`.
    /// `emit`, `parallel`, `serial` and `bail` pass waterfall listeners by.
    @discardableResult
    public func on<K: EventKey>(
        _ key: K.Type, options: EventOptions = EventOptions(),
        _ listener: @escaping @CordisActor (K.Args, _ next: @escaping @CordisActor () async throws -> K.Result)
            async throws -> K.Result
    ) throws -> EffectHandle {
        try listen(K.name, body: listener, isAsync: true, global: options.global, prepend: options.prepend)
    }

    /// Runs the waterfall listeners of `key` as an onion (cordis-ios's `waterfall`): the first gets `args`
    /// and a `next` running the second, and so on; after the last, `next` runs `terminal`. Returns what
    /// the first listener returns (`terminal`'s result when there is none).
    ///
    /// - Parameter scope: only the listeners it admits take part; nil admits all.
    /// - Throws: `CordisError` `.nextCalledMultipleTimes` when a `next` is called twice; what a listener or
    ///   `terminal` throws.
    @discardableResult
    public func waterfall<K: EventKey>(
        scope: (any EventScope)? = nil, _ key: K.Type, _ args: K.Args,
        _ terminal: @escaping @CordisActor () async throws -> K.Result
    ) async throws -> K.Result {
        let listeners = world.events.snapshot(K.name, filter(scope)).compactMap {
            $0.body as? WaterfallListener<K.Args, K.Result>
        }
        return try await runWaterfall(listeners, args, terminal)
    }

    private func filter(_ scope: (any EventScope)?) -> EventBus.Filter {
        EventBus.Filter(service: nil, realm: .root, scope: scope)
    }
}

/// A waterfall listener by key, as it is held: the arguments and `next` to the result.
typealias WaterfallListener<Args, Result> =
    @CordisActor (Args, @escaping @CordisActor () async throws -> Result) async throws -> Result

/// Runs `listeners` as an onion over `args`: each gets a single-use `next` running the rest, and the last
/// one's runs `terminal`.
@CordisActor
func runWaterfall<Args, Result>(
    _ listeners: [WaterfallListener<Args, Result>], _ args: Args,
    _ terminal: @escaping @CordisActor () async throws -> Result
) async throws -> Result {
    func step(_ index: Int) async throws -> Result {
        guard index < listeners.count else { return try await terminal() }
        let used = NextGuard()
        return try await listeners[index](args) {
            try used.take()
            return try await step(index + 1)
        }
    }
    return try await step(0)
}

/// Makes a waterfall's `next` single-use.
@CordisActor
private final class NextGuard {
    private var used = false

    func take() throws {
        guard !used else { throw CordisError(.nextCalledMultipleTimes, "next() called multiple times") }
        used = true
    }
}
