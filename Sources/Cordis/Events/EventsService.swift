/// The event listeners of a world as cordis-ios's `ctx.events` shows them (cordis-ios's
/// `EventsService`): a view of the world's event bus, read live.
///
/// Listen and emit with `ctx.on`, `ctx.emit` and the other dispatches on the context, as in cordis-ios;
/// this view is for inspection (leak checks).
@CordisActor
public final class EventsService {
    private let world: World

    init(world: World) {
        self.world = world
    }

    /// How many listeners each event name has, for the names that have one: every listener registered
    /// with `ctx.on`, `onBail` or `once` (and the ones this package registers, such as a running
    /// Loader's on `internal/update`). A listener goes when the effect that holds it is reverted.
    ///
    /// cordis-ios also counts its own `internal/update` dispatcher there, and counts a fiber's own
    /// `UpdateEvent` waterfall listeners nowhere; here those listeners count under `internal/update`.
    public var snapshot: [String: Int] { world.events.counts.filter { $0.value > 0 } }
}

extension Context {
    /// The event listeners of this context's world (cordis-ios's `ctx.events`).
    public var events: EventsService { EventsService(world: world) }
}
