/// A plugin that provides itself as the service of `Key` (cordis's `Service`, cordis-ios's
/// `ServicePlugin`); `@Service(Key.self)` makes a class one.
///
/// Its fiber is named after the key. When the fiber applies, the instance is provided under `Key` in the
/// fiber's realm, then `setup(_:)` runs; consumers start once the fiber is `active`, that is once `setup`
/// returns. If `setup` throws, the service is withdrawn with everything else `setup` collected and the
/// fiber is `failed`. `check()` gates availability: while it returns false the service does not count
/// and its consumers stay (or go back to) `pending`; it is asked whenever the service's slot changes and
/// on `ctx.recheck(Key.self)`.
///
/// A class that declares its own `apply(_:)` replaces this: `setup(_:)` is then never called and the
/// service is provided once `apply` returns (this package's own form). All requirements are isolated to
/// `CordisActor`.
@CordisActor
public protocol ServicePlugin: Plugin {
    /// The key the plugin provides itself under.
    associatedtype Key: ServiceKey
    /// The context of the plugin's fiber (cordis-ios requires it too); `@Service` generates it.
    var ctx: Context { get }
    /// Starts the service; runs after it is provided, before consumers start. What it collects in
    /// `scope` is reverted when the fiber stops.
    func setup(_ scope: EffectScope) async throws
    /// Whether consumers may use the service now. `true` unless the class says otherwise.
    func check() -> Bool
}

extension ServicePlugin {
    /// The scope of the events this service emits (cordis-ios's `eventScope`): with `emit(scope:…)` and
    /// the other dispatches by key, only the listeners that resolve `Key` in the service's realm (and
    /// global ones) receive them.
    public var eventScope: IsolationScope { IsolationScope(ctx: ctx, name: Key.name) }

    /// The key's name: a service plugin's fiber, logs and status carry the service's name.
    public static var name: String { Key.name }

    /// Nothing to start.
    public func setup(_ scope: EffectScope) async throws {}

    /// Always available.
    public func check() -> Bool { true }

    /// The instance itself under `Key`: a class written in cordis-ios's protocol form (`final class X:
    /// ServicePlugin` with `typealias Key`, no `@Service`) provides itself as cordis-ios's does. `@Service`
    /// generates the same member, checked by the compiler; here the check is made when the fiber applies
    /// (`provideItself(in:)` fails the fiber when the instance is not a `Key.Value`).
    public func provisions() -> [ServiceProvision] {
        [ServiceProvision(name: Key.name, value: self)]
    }

    /// Provides the instance under `Key` (gated by `check()`), then runs `setup(_:)`.
    public func apply(_ scope: EffectScope) async throws {
        try provideItself(in: scope)
        try await setup(scope)
    }

    /// Provides `provisions()` in `scope`, each gated by `check()`, and marks the scope so the fiber does
    /// not provide them again once `apply` returns.
    ///
    /// - Throws: `CordisError` `.typeMismatch` when the instance is not a `Key.Value` (a hand-written
    ///   class whose key serves another type), so the fiber fails instead of providing nothing.
    func provideItself(in scope: EffectScope) throws {
        guard (self as Any) is Key.Value else {
            throw CordisError(
                .typeMismatch,
                "service plugin \(Self.self) cannot provide itself as \"\(Key.name)\": "
                    + "\(Key.self).Value is \(Key.Value.self), not \(Self.self)")
        }
        for provision in provisions() {
            try scope.ctx.provide(
                name: provision.name, value: provision.value, in: scope,
                check: { [weak self] in self?.check() ?? false })
        }
        scope.providesItself = true
    }
}
