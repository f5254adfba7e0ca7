/// A typed event name: listeners receive a `Payload` and return a `Result` (`Void` for notifications;
/// an optional for events used with `bail` and `serial`, where the first non-nil result wins).
public struct Event<Payload, Result>: Sendable, Hashable, CustomStringConvertible {
    /// The event's name, such as `internal/status`.
    public let name: String

    /// Names an event.
    @available(*, deprecated, message: "declare the event as an EventKey (enum E: EventKey { typealias Args = … })")
    public init(_ name: String) {
        self.name = name
    }

    /// Names one of the runtime's own events.
    init(named name: String) {
        self.name = name
    }

    /// The name.
    public var description: String { name }
}

/// A typed event dispatched as a waterfall: each listener gets the payload and a single-use `next`
/// that runs the rest of the chain.
public struct WaterfallEvent<Payload, Result>: Sendable, Hashable, CustomStringConvertible {
    /// The event's name.
    public let name: String

    /// Names an event.
    @available(*, deprecated, message: "declare the event as an EventKey (enum E: EventKey { typealias Args = … })")
    public init(_ name: String) {
        self.name = name
    }

    /// Names one of the runtime's own events.
    init(named name: String) {
        self.name = name
    }

    /// The name.
    public var description: String { name }
}

/// A state change of a fiber: the payload of `internal/status`, `StatusEvent`'s arguments.
@available(*, deprecated, renamed: "StatusEvent.Args")
public typealias StatusChange = StatusEvent.Args

/// A config update of a fiber: the payload of `internal/update`.
@CordisActor
public struct FiberUpdate {
    /// The fiber whose config changed (the new one is `fiber.config`).
    public let fiber: Fiber
    /// Whether the Loader leaves the entry's saved config as it is (cordis-ios's `noSave`).
    public let noSave: Bool

    init(fiber: Fiber, noSave: Bool = false) {
        self.fiber = fiber
        self.noSave = noSave
    }
}

extension Event where Payload == StatusEvent.Args, Result == Void {
    /// `internal/status`: a fiber changed state.
    @available(*, deprecated, message: "listen with on(StatusEvent.self)")
    public static var status: Self { statusChanged }

    static var statusChanged: Self { Self(named: StatusEvent.name) }
}

extension Event where Payload == Fiber, Result == Void {
    /// `internal/plugin`: a fiber was created, or disposed (then its state is `disposed`).
    @available(*, deprecated, message: "listen with on(PluginEvent.self)")
    public static var plugin: Self { fiberChanged }

    static var fiberChanged: Self { Self(named: PluginEvent.name) }
}

extension Event where Payload == ServiceSlot, Result == Void {
    /// `internal/service`: the provider a service resolves to in a realm changed.
    @available(*, deprecated, message: "listen with on(ServiceEvent.self, options:)")
    public static var service: Self { slotChanged }

    static var slotChanged: Self { Self(named: ServiceEvent.name) }
}

extension Event where Payload == FiberUpdate, Result == Void {
    /// `internal/update`: a fiber's config was replaced (it restarts next).
    @available(*, deprecated, message: "listen with a waterfall on(UpdateEvent.self) { args, next in … }")
    public static var update: Self { configReplaced }

    static var configReplaced: Self { Self(named: UpdateEvent.name) }
}
