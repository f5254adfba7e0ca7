/// One plugin of a world and its live fibers (cordis-ios's `Runtime`): a view of the fibers whose plugin
/// has `identity`, read live.
///
/// `ctx.registry` and `fiber.runtime` make new views on each read; two views of one plugin are `==`.
@CordisActor
public final class Runtime {
    private let world: World
    /// Which plugin this is.
    public nonisolated let identity: PluginIdentity
    /// The plugin's name; nil for a function plugin given none, as in cordis-ios.
    public let name: String?

    init(world: World, identity: PluginIdentity, name: String) {
        self.world = world
        self.identity = identity
        self.name = name == PluginRunner.unnamed ? nil : name
    }

    /// The plugin's fibers that are not disposed yet, oldest first.
    public var fiberList: [Fiber] {
        world.fibers.fibers.filter { !$0.isRoot && $0.runner.identity == identity }
    }
}

extension Runtime: Hashable {
    /// Whether both are views of the same plugin.
    public nonisolated static func == (lhs: Runtime, rhs: Runtime) -> Bool { lhs.identity == rhs.identity }

    /// Hashes the plugin's identity.
    public nonisolated func hash(into hasher: inout Hasher) { hasher.combine(identity) }
}

extension Fiber {
    /// The plugin this fiber is a fiber of (cordis-ios's `runtime`); nil for the root fiber.
    public var runtime: Runtime? {
        isRoot ? nil : Runtime(world: world, identity: runner.identity, name: runner.name)
    }
}
