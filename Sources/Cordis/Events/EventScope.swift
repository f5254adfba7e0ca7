/// Which listeners an emission reaches (cordis-ios's `EventScope`): give one as `scope:` to `emit`,
/// `parallel`, `serial`, `bail` or `waterfall` by `EventKey`, and only the listeners whose registering
/// context it admits are called (listeners registered with `EventOptions(global: true)` always are).
public protocol EventScope: Sendable {
    /// Whether the listener registered on `hookContext` receives the emission.
    @CordisActor func filter(_ hookContext: Context) -> Bool
}

/// The scope of the listeners that resolve the service `name` in the same realm as `ctx`
/// (cordis-ios's `IsolationScope`): what `emit(_:_:service:)` does for this package's `Event`s.
public struct IsolationScope: EventScope {
    /// The context whose realm the listeners must share.
    public let ctx: Context
    /// The service whose realm is compared.
    public let name: String

    /// Creates the scope of the listeners resolving `name` where `ctx` does.
    public init(ctx: Context, name: String) {
        self.ctx = ctx
        self.name = name
    }

    /// Whether `hookContext` resolves `name` in `ctx`'s realm.
    @CordisActor
    public func filter(_ hookContext: Context) -> Bool {
        hookContext.realm(for: name) == ctx.realm(for: name)
    }
}

/// `internal/plugin` by key (cordis-ios's `PluginEvent`): a fiber was created, or disposed (then its
/// state is `disposed`); the same event as `Event.plugin`.
public enum PluginEvent: EventKey {
    /// The fiber.
    public typealias Args = Fiber
    /// It never bails.
    public typealias Result = Never
    /// `internal/plugin`.
    public static var name: String { "internal/plugin" }
}

/// `internal/status` by key (cordis-ios's `StatusEvent`): a fiber changed state (`fiber.state` is the
/// new one); the same event as `Event.status`.
public enum StatusEvent: EventKey {
    /// The fiber and its state before the change.
    public typealias Args = (fiber: Fiber, oldState: FiberState)
    /// It never bails.
    public typealias Result = Never
    /// `internal/status`.
    public static var name: String { "internal/status" }
}

/// `internal/service` by key (cordis-ios's `ServiceEvent`): the provider a service resolves to changed;
/// `value` is what it resolves to now (nil when none). The same event as `Event.service`, which every
/// listener receives, whatever its realm.
public enum ServiceEvent: EventKey {
    /// The service's name and its value now.
    public typealias Args = (name: String, value: Any?)
    /// It never bails.
    public typealias Result = Never
    /// `internal/service`.
    public static var name: String { "internal/service" }
}

/// `internal/update` by key (cordis-ios's `UpdateEvent`): a waterfall run by `fiber.update` before the new
/// config takes effect. Listen with a waterfall `on` (`{ args, next in … }`): calling `next` lets the
/// update go on, not calling it vetoes it (nothing changes). A listener hears the updates of its own
/// context's fiber, or of every fiber with `EventOptions(global: true)`. `config` is the new config,
/// decoded and validated. (`Event.update` is told after the config is replaced.)
public enum UpdateEvent: EventKey {
    /// The fiber, its new config, and whether a Loader keeps the entry's saved config.
    public typealias Args = (fiber: Fiber, config: Any?, noSave: Bool)
    /// The waterfall returns nothing.
    public typealias Result = Void
    /// `internal/update`.
    public static var name: String { "internal/update" }
}
