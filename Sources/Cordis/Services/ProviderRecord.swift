/// One provider of a service in a realm: the value consumers get, and the fiber whose state decides
/// whether it counts.
///
/// A provider counts only while its fiber is `active`. Ordinary providers are unique per slot;
/// fallback providers (remote proxies) never conflict and serve only while no ordinary provider does.
@CordisActor
public final class ProviderRecord {
    /// A process-unique number, in creation order.
    public let id: Int
    /// Where the service resolves.
    public let slot: ServiceSlot
    /// The fiber that provides it.
    public unowned let fiber: Fiber
    /// The instance consumers receive (replaced by `ctx.set`).
    public internal(set) var value: Any
    /// For a fallback provider, its rank: the lowest rank serves first. Nil for an ordinary provider.
    public let fallbackRank: String?
    /// The provider's availability gate (cordis's `Service.check`), asked whenever the slot is refreshed.
    let check: (@CordisActor () -> Bool)?

    init(id: Int, slot: ServiceSlot, fiber: Fiber, value: Any, fallbackRank: String?, check: (@CordisActor () -> Bool)?) {
        self.check = check
        self.id = id
        self.slot = slot
        self.fiber = fiber
        self.value = value
        self.fallbackRank = fallbackRank
    }

    /// Whether this is a fallback provider.
    public var isFallback: Bool { fallbackRank != nil }

    /// Whether it counts now: its fiber is `active` and its `check` (if any) passes.
    public var isAvailable: Bool { fiber.state == .active && (check?() ?? true) }
}
