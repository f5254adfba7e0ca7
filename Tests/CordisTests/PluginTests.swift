import Testing
@testable import Cordis

/// A plugin type with a typed config (cordis's "object plugin").
@CordisActor @Plugin
final class ConfiguredPlugin {
    struct Config: Decodable, Sendable, Equatable {
        var bar: String
    }

    static var seen: [Config] = []

    func apply(_ scope: EffectScope) async throws {
        Self.seen.append(config)
    }
}

/// A plugin type named like cordis's `class Qux`.
@CordisActor @Plugin
final class Qux {}

/// cordis `plugin.spec.ts` (describe `Plugin`).
@Suite("Plugin", .timeLimit(.minutes(1))) @CordisActor
struct PluginTests {
    @Test func aFunctionPluginIsAppliedOnceWithItsConfig() async throws {
        let (root, _) = try makeRoot()
        let seen = Trail()
        let fiber = try root.plugin(FunctionPlugin<[String: String]>(name: "functional") { _, config, _ in
            seen.add(config.map { "\($0.key)=\($0.value)" }.joined())
        }, config: ["foo": "bar"])
        try await fiber.await()
        #expect(seen.entries == ["foo=bar"])
    }

    @Test func aPluginTypeIsInstantiatedAndAppliedOnceWithItsConfig() async throws {
        let (root, _) = try makeRoot()
        ConfiguredPlugin.seen = []
        let fiber = try root.plugin(ConfiguredPlugin.self, config: .init(bar: "foo"))
        try await fiber.await()
        #expect(ConfiguredPlugin.seen == [.init(bar: "foo")])
        #expect((fiber.plugin as? ConfiguredPlugin)?.config == .init(bar: "foo"))
        #expect(fiber.name == "ConfiguredPlugin")
    }

    @Test func aDisposerCannotCreateEffectsOnItsInactiveContext() async throws {
        let (root, _) = try makeRoot()
        let called = Counter()
        let messages = Trail()
        let fiber = try root.plugin(FunctionPlugin<NoConfig>(name: "inactive") { _, _, scope in
            let ctx = scope.ctx
            try scope.collect {
                for attempt in [
                    { try ctx.plugin(FunctionPlugin<NoConfig>(name: "child") { _, _, _ in called.hit() }) } as @CordisActor () throws -> Void,
                    { try scope.collect { called.hit() } },
                    { try ctx.on(CustomEvent.self) { called.hit() } },
                ] {
                    do { try attempt() } catch let error as CordisError where error.code == .inactiveEffect {
                        messages.add(error.message)
                    }
                }
            }
        })
        try await fiber.await()
        try await fiber.dispose()
        #expect(messages.entries == Array(repeating: "cannot create effect on inactive context", count: 3))
        try root.emit(CustomEvent.self)
        await root.settled()
        #expect(called.value == 0)
    }

    @Test func aContextDescribesItselfByItsPluginsName() async throws {
        let (root, _) = try makeRoot()
        #expect("\(root)" == "Context <root>")
        let foo = try root.plugin(FunctionPlugin<NoConfig>(name: "foo") { _, _, _ in })
        #expect("\(foo.ctx)" == "Context <foo>")
        let qux = try root.plugin(Qux.self)
        #expect("\(qux.ctx)" == "Context <Qux>")
        #expect("\(root.isolate("foo"))" == "Context <root>")
    }

    @Test func nestedPluginsAreDisposedWithTheirParentAndTakeTheirListenersAlong() async throws {
        let (root, _) = try makeRoot()
        let calls = Counter()
        let fiber = try root.plugin(FunctionPlugin<NoConfig>(name: "outer") { _, _, scope in
            try scope.ctx.on(CustomEvent.self) { calls.hit() }
            let nested = try scope.ctx.plugin(FunctionPlugin<NoConfig>(name: "nested") { _, _, scope in
                try scope.ctx.on(CustomEvent.self) { calls.hit() }
                try scope.ctx.plugin(FunctionPlugin<NoConfig>(name: "innermost") { _, _, scope in
                    try scope.ctx.on(CustomEvent.self) { calls.hit() }
                })
            })
            try await nested.await()
        })
        try root.on(CustomEvent.self) { calls.hit() }
        try await fiber.await()
        await root.settled()
        #expect(calls.value == 0)
        #expect(root.fibers.count == 4)
        try root.emit(CustomEvent.self)
        #expect(calls.value == 4)

        try await fiber.dispose()
        #expect(root.fibers.map(\.id) == [root.fiber.id])
        try root.emit(CustomEvent.self)
        #expect(calls.value == 5)

        try await fiber.dispose()
        #expect(root.fibers.count == 1)
        try root.emit(CustomEvent.self)
        #expect(calls.value == 6)
    }

    struct Snapshot: Equatable {
        var listeners: [String: Int]
        var fibers: Int
        var providers: Int
        var rootEffects: Int
    }

    func snapshot(_ root: Context) -> Snapshot {
        Snapshot(
            listeners: root.listenerCounts, fibers: root.fibers.count, providers: root.allProviderRecords.count,
            rootEffects: root.fiber.effects.count)
    }

    @Test func disposingAPluginRestoresTheWorldAndPluggingItAgainRebuildsTheSameWorld() async throws {
        let (root, _) = try makeRoot()
        let plug = { @CordisActor in
            try root.plugin(FunctionPlugin<NoConfig>(name: "outer") { _, _, scope in
                try scope.ctx.on(CustomEvent.self) {}
                try scope.ctx.provide(FooKey.self, Box(1))
                try scope.ctx.plugin(FunctionPlugin<NoConfig>(name: "nested") { _, _, scope in
                    try scope.ctx.on(StatusEvent.self) { _ in }
                    try scope.ctx.plugin(FunctionPlugin<NoConfig>(name: "innermost", inject: [FooKey.self]) { _, _, scope in
                        try scope.ctx.on(CustomEvent.self) {}
                    })
                })
            })
        }
        let before = snapshot(root)
        let fiber = try plug()
        try await fiber.await()
        await root.settled()
        let after = snapshot(root)
        #expect(after != before)
        try await fiber.dispose()
        await root.settled()
        #expect(snapshot(root) == before)
        _ = try plug()
        await root.settled()
        #expect(snapshot(root) == after)
    }

    @Test func disposingTheRootRevertsEverythingItHoldsAndTheRootLivesOn() async throws {
        let root = Context()
        let disposed = Counter()
        let fiber = try root.plugin(FunctionPlugin<NoConfig>(name: "child") { _, _, scope in
            try scope.collect { disposed.hit() }
        })
        try await fiber.await()
        #expect(root.fiber.id == 0)
        #expect(fiber.id == 1)
        #expect(root.fiber.effects.count == 1)
        try await root.fiber.dispose()
        #expect(root.fiber.state == .active)
        #expect(fiber.state == .disposed)
        #expect(disposed.value == 1)
        #expect(root.fiber.effects.isEmpty)
        try await root.fiber.dispose()
        #expect(disposed.value == 1)
        let again = try root.plugin(FunctionPlugin<NoConfig>(name: "again") { _, _, _ in })
        try await again.await()
        #expect(again.state == .active)
    }

    @Test func applyAndItsCollectedTeardownRunOncePerLife() async throws {
        let (root, _) = try makeRoot()
        let trail = Trail()
        let fiber = try root.plugin(FunctionPlugin<NoConfig>(name: "service-init") { _, _, scope in
            trail.add("start")
            try scope.collect { trail.add("stop") }
        })
        try await fiber.await()
        #expect(trail.entries == ["start"])
        try await fiber.dispose()
        #expect(trail.entries == ["start", "stop"])
    }
}
