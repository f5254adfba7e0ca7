import Cordis
import Testing

struct FooBar: Codable, Sendable, Equatable {
    var foo: String
}

struct BarFoo: Codable, Sendable, Equatable {
    var bar: String
}

/// A plugin type written in cordis-ios's protocol form that records the config of each instance.
@CordisActor
final class ObjectPlugin: Plugin {
    typealias Config = BarFoo
    static var configs: [BarFoo] = []

    init(ctx: Context, config: BarFoo) {
        Self.configs.append(config)
    }

    func apply(_ scope: EffectScope) async throws {}
}

/// A plugin type that records how its context describes itself.
@CordisActor
final class Qux: Plugin {
    static var descriptions: [String] = []
    let ctx: Context

    init(ctx: Context, config: NoConfig) {
        self.ctx = ctx
    }

    func apply(_ scope: EffectScope) async throws {
        Self.descriptions.append(ctx.description)
    }
}

/// A plugin type that counts its starts and its stops.
@CordisActor
final class StartStop: Plugin {
    static let starts = Recorder<Void>()
    static let stops = Recorder<Void>()

    init(ctx: Context, config: NoConfig) {}

    func apply(_ scope: EffectScope) async throws {
        Self.starts.record(())
        try scope.collect { Self.stops.record(()) }
    }
}

/// Ports cordis-ios's `Tests/CordisTests/PluginTests.swift`: function and object plugins, inactive
/// contexts, how contexts describe themselves, the registry, nesting, and disposing the root.
///
/// Serialized: `Qux` and `StartStop` keep what they saw in static state that two cases read.
@Suite("PluginTests", .serialized)
@CordisActor
struct PluginTests {
    /// Ports cordis-ios PluginTests "apply functional plugin".
    @Test("apply functional plugin")
    func aFunctionPluginAppliesWithItsConfig() async throws {
        let root = Context()
        let configs = Recorder<FooBar>()
        try await root.plugin(
            functionPlugin(FooBar.self) { _, config, _ in configs.record(config) }, config: FooBar(foo: "bar")
        ).await()
        #expect(configs.calls == [FooBar(foo: "bar")])
    }

    /// Ports cordis-ios PluginTests "apply object plugin".
    @Test("apply object plugin")
    func aPluginTypeIsMadeWithItsConfig() async throws {
        let root = Context()
        ObjectPlugin.configs = []
        try await root.plugin(ObjectPlugin.self, config: BarFoo(bar: "foo")).await()
        #expect(ObjectPlugin.configs == [BarFoo(bar: "foo")])
    }

    /// Ports cordis-ios PluginTests "apply invalid plugin".
    @Test("apply invalid plugin")
    func aDisposedContextRefusesNewPlugins() async throws {
        let root = Context()
        let fiber = try await root.plugin(functionPlugin { _, _, _ in }).await()
        let ctx = fiber.ctx
        try await fiber.dispose()
        expectError("inactive context") { _ = try ctx.plugin(functionPlugin { _, _, _ in }) }
    }

    /// Ports cordis-ios PluginTests "inactive context".
    @Test("inactive context")
    func aContextRefusesNewEffectsWhileItsFiberUnloads() async throws {
        let root = Context()
        let started = Recorder<Void>()
        let refusals = Recorder<String>()
        let fiber = try root.plugin(functionPlugin { ctx, _, scope in
            try scope.collect {
                let attempts: [@CordisActor () throws -> Void] = [
                    { _ = try ctx.plugin(functionPlugin { _, _, _ in started.record(()) }) },
                    { _ = try ctx.effect(sync: { nil }) },
                    { _ = try ctx.on(CustomEvent.self) { _ in } },
                ]
                for attempt in attempts {
                    do { try attempt() } catch { refusals.record("\(error)") }
                }
            }
        })
        try await fiber.await()

        try await fiber.dispose()
        #expect(started.count == 0)
        #expect(refusals.count == 3)
        #expect(refusals.calls.allSatisfy { $0.contains("inactive context") })
    }

    /// Ports cordis-ios PluginTests "context inspect".
    @Test("context inspect")
    func aContextDescribesItselfByItsPlugin() async throws {
        let root = Context()
        let described = Recorder<String>()
        #expect(root.description == "Context <root>")

        try await root.plugin(functionPlugin { ctx, _, _ in described.record(ctx.description) }).await()
        try await root.plugin(functionPlugin(name: "foo") { ctx, _, _ in described.record(ctx.description) }).await()
        try await root.plugin(functionPlugin(name: "bar") { ctx, _, _ in described.record(ctx.description) }).await()
        Qux.descriptions = []
        try await root.plugin(Qux.self).await()
        #expect(described.calls == ["Context <root>", "Context <foo>", "Context <bar>"])
        #expect(Qux.descriptions == ["Context <Qux>"])
    }

    /// Ports cordis-ios PluginTests "ctx.registry".
    @Test("ctx.registry")
    func theRegistryGroupsFibersByPlugin() async throws {
        let root = Context()
        let twice = functionPlugin { _, _, _ in }
        try root.plugin(twice)
        try root.plugin(twice)
        try root.plugin(Qux.self)
        #expect(root.registry.size == 2)
        #expect(root.registry.runtimes.map(\.fiberList.count) == [2, 1])
        #expect(root.registry.has(twice))
        #expect(root.registry.has(Qux.self))
        #expect(root.registry.get(Qux.self)?.name == "Qux")
    }

    /// Ports cordis-ios PluginTests "nested plugins".
    @Test("nested plugins")
    func disposingAPluginDisposesThePluginsItStarted() async throws {
        let root = Context()
        let heard = Recorder<Void>()
        try root.on(CustomEvent.self) { _ in heard.record(()) }
        let fiber = try await root.plugin(functionPlugin { ctx, _, _ in
            try ctx.on(CustomEvent.self) { _ in heard.record(()) }
            try await ctx.plugin(functionPlugin { ctx, _, _ in
                try ctx.on(CustomEvent.self) { _ in heard.record(()) }
                try await ctx.plugin(functionPlugin { ctx, _, _ in
                    try ctx.on(CustomEvent.self) { _ in heard.record(()) }
                }).await()
            }).await()
        }).await()

        // The root's listener and one for each of the three nested plugins.
        #expect(heard.count == 0)
        #expect(root.registry.size == 3)
        try root.emit(CustomEvent.self)
        #expect(heard.count == 4)

        // Only the root's listener is left.
        heard.reset()
        try await fiber.dispose()
        #expect(root.registry.size == 0)
        try root.emit(CustomEvent.self)
        #expect(heard.count == 1)

        // Disposing again changes nothing.
        heard.reset()
        try await fiber.dispose()
        #expect(root.registry.size == 0)
        try root.emit(CustomEvent.self)
        #expect(heard.count == 1)
    }

    /// Ports cordis-ios PluginTests "compare snapshot".
    @Test("compare snapshot")
    func deletingAPluginRemovesEveryListenerItsTreeAdded() async throws {
        let nested = functionPlugin { ctx, _, _ in
            try ctx.on(CustomEvent.self) { _ in }
            try await ctx.plugin(functionPlugin { ctx, _, _ in
                try ctx.on(CustomEvent.self) { _ in }
                try await ctx.plugin(functionPlugin { ctx, _, _ in
                    try ctx.on(CustomEvent.self) { _ in }
                }).await()
            }).await()
        }
        let root = Context()
        let before = root.events.snapshot
        try await root.plugin(nested).await()
        let after = root.events.snapshot

        await root.registry.delete(nested)
        try await quiescence(of: root)
        #expect(root.events.snapshot == before)
        try await root.plugin(nested).await()
        #expect(root.events.snapshot == after)
    }

    /// Ports cordis-ios PluginTests "root dispose".
    ///
    /// cordis-ios reads `root.fiber.disposables.count`, an internal list; its public counterpart here is
    /// `root.fiber.effects`, which lists the hold the root fiber keeps on each child fiber.
    @Test("root dispose")
    func disposingTheRootDisposesItsPluginsAndKeepsTheRoot() async throws {
        let root = Context()
        let disposed = Recorder<Void>()
        let fiber = try root.plugin(functionPlugin { _, _, scope in try scope.collect { disposed.record(()) } })
        #expect(root.fiber.uid == 0)
        #expect(fiber.uid == 1)
        #expect(disposed.count == 0)
        #expect(root.fiber.effects.count == 1)

        try await fiber.await()
        try await root.fiber.dispose()
        #expect(root.fiber.uid == 0)
        #expect(fiber.uid == nil)
        #expect(disposed.count == 1)
        #expect(root.fiber.effects.isEmpty)

        try await root.fiber.dispose()
        #expect(root.fiber.uid == 0)
        #expect(fiber.uid == nil)
        #expect(disposed.count == 1)
        #expect(root.fiber.effects.isEmpty)
    }

    /// Ports cordis-ios PluginTests "Service.init".
    @Test("Service.init")
    func aPluginTypeStartsOnApplyAndStopsOnDispose() async throws {
        let root = Context()
        StartStop.starts.reset()
        StartStop.stops.reset()
        let fiber = try await root.plugin(StartStop.self).await()
        #expect(StartStop.starts.count == 1)
        #expect(StartStop.stops.count == 0)

        try await fiber.dispose()
        #expect(StartStop.starts.count == 1)
        #expect(StartStop.stops.count == 1)
    }
}
