/// The services of a plugin world as cordis-ios's `ctx.reflect` shows them (cordis-ios's
/// `ReflectService`): a view of the world's service registry, read live.
///
/// Services are provided with `ctx.provide` and read with `ctx[Key.self]` or `ctx.get(_:strict:)` as in
/// cordis-ios; this view is for inspection. This package's own spelling: `ctx.providerRecords`,
/// `ctx.provider(of:in:)`.
@CordisActor
public final class ReflectService {
    private let world: World

    init(world: World) {
        self.world = world
    }

    /// Every service name a provider was ever registered under in this world.
    public var props: Set<String> { world.registry.providedNames }

    /// The provided services, one per slot: the provider the slot resolves to now, else (while it is not
    /// available, or a new provider waits for the old one to leave) its oldest registered provider.
    ///
    /// Keyed by `ServiceSlot` (name and realm) where cordis-ios keys by `Realm`: a cordis-ios realm
    /// belongs to one service name, a realm here (`.root`, a label) is shared by every name.
    public var store: [ServiceSlot: Impl] {
        var store: [ServiceSlot: Impl] = [:]
        for slot in world.registry.providedSlots {
            if let record = world.registry.visibleRecord(slot) { store[slot] = Impl(record) }
        }
        return store
    }
}

extension Context {
    /// The services of this context's world (cordis-ios's `ctx.reflect`).
    public var reflect: ReflectService { ReflectService(world: world) }
}
