/// The plugins of a world as cordis-ios's `ctx.registry` shows them (cordis-ios's `RegistryService`): a
/// view of the world's live fibers grouped by plugin, read live.
///
/// A plugin is listed while it has a fiber that is not disposed: it appears with its first fiber and
/// goes with its last. This package's own spelling: `ctx.fibers`, `fiber.dispose()`.
@CordisActor
public final class RegistryService {
    private let world: World

    init(world: World) {
        self.world = world
    }

    /// The id of the newest fiber of the world (cordis-ios's last `uid` handed out; 0 before any plugin).
    public var counter: Int { world.lastFiberID }

    /// How many plugins have a live fiber.
    public var size: Int { runtimes.count }

    /// The plugins with a live fiber, in the order of their oldest live fiber (cordis-ios lists them in
    /// the order they were first plugged; the two differ only once a plugin's first fiber is gone while a
    /// later one lives).
    public var runtimes: [Runtime] {
        var seen: Set<PluginIdentity> = []
        var runtimes: [Runtime] = []
        for fiber in world.fibers.fibers where !fiber.isRoot {
            let identity = fiber.runner.identity
            if seen.insert(identity).inserted {
                runtimes.append(Runtime(world: world, identity: identity, name: fiber.runner.name))
            }
        }
        return runtimes
    }

    /// The plugin with `identity`, while it has a live fiber.
    public func get(_ identity: PluginIdentity) -> Runtime? {
        guard let fiber = world.fibers.fibers.first(where: { !$0.isRoot && $0.runner.identity == identity }) else {
            return nil
        }
        return Runtime(world: world, identity: identity, name: fiber.runner.name)
    }

    /// The plugin type `P`, while it has a live fiber.
    public func get<P: Plugin>(_ type: P.Type) -> Runtime? { get(PluginType<P>().identity) }

    /// The plugin value `plugin` (a `FunctionPlugin`, a `PluginType`), while it has a live fiber.
    public func get(_ plugin: some AnyPlugin) -> Runtime? { get(plugin.identity) }

    /// Whether the plugin with `identity` has a live fiber.
    public func has(_ identity: PluginIdentity) -> Bool { get(identity) != nil }

    /// Whether the plugin type `P` has a live fiber.
    public func has<P: Plugin>(_ type: P.Type) -> Bool { has(PluginType<P>().identity) }

    /// Whether the plugin value `plugin` has a live fiber.
    public func has(_ plugin: some AnyPlugin) -> Bool { has(plugin.identity) }

    /// Disposes every fiber of the plugin with `identity` and returns the plugin (nil when it had no
    /// live fiber). The returned view lists no fiber once they are disposed.
    @discardableResult
    public func delete(_ identity: PluginIdentity) async -> Runtime? {
        guard let runtime = get(identity) else { return nil }
        for fiber in runtime.fiberList {
            await fiber.dispose(reason: .explicit)
        }
        return runtime
    }

    /// Disposes every fiber of the plugin type `P` (see `delete(_:)`).
    @discardableResult
    public func delete<P: Plugin>(_ type: P.Type) async -> Runtime? { await delete(PluginType<P>().identity) }

    /// Disposes every fiber of the plugin value `plugin` (see `delete(_:)`).
    @discardableResult
    public func delete(_ plugin: some AnyPlugin) async -> Runtime? { await delete(plugin.identity) }
}

extension Context {
    /// The plugins of this context's world (cordis-ios's `ctx.registry`).
    public var registry: RegistryService { RegistryService(world: world) }
}
