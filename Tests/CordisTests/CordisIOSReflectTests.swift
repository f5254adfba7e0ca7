import Testing
@testable import Cordis

/// A plugin type with nothing to do, for the registry's lookups by type.
@CordisActor
private final class Quiet: Plugin {
    init(ctx: Context, config: EmptyConfig) {}
}

/// An event the listeners below listen to.
private enum Pinged: EventKey {
    typealias Args = Int
    typealias Result = Never
    static let name = "reflect-test/pinged"
}

/// An intercept config carried by an injection.
private struct Tone: Sendable, Equatable {
    var loud: Bool
}

/// cordis-ios's `ctx.reflect`, `ctx.registry`, `ctx.events` and the fiber's `parent`, `store`, `inertia`,
/// `inject` and `runtime`: views of what the world holds, followed as plugins come and go.
@Suite("cordis-ios's reflection", .timeLimit(.minutes(1))) @CordisActor
struct CordisIOSReflectTests {
    @Test func reflectShowsAProviderWhileItIsProvidedAndKeepsItsNameAfter() async throws {
        let (root, _) = try makeRoot()
        let slot = ServiceSlot(name: FooKey.name, realm: .root)
        #expect(root.reflect.store[slot] == nil && !root.reflect.props.contains(FooKey.name))
        let provider = try root.plugin(FunctionPlugin<NoConfig>(name: "foo-provider") { _, _, scope in try scope.ctx.provide(FooKey.self, Box(7)) })
        try await provider.await()
        let impl = try #require(root.reflect.store[slot])
        #expect(impl.name == "foo" && impl.fiber === provider && impl.ctx.fiber === provider)
        #expect((impl.value as? Box)?.value == 7)
        #expect(impl == root.reflect.store[slot] && impl.record === root.currentProvider(of: FooKey.name))
        #expect(root.reflect.props.contains(FooKey.name))
        try await provider.dispose()
        #expect(root.reflect.store[slot] == nil)
        #expect(root.reflect.props.contains(FooKey.name))
    }

    @Test func reflectKeysAnIsolatedProviderByItsSlotAndItsContextResolvesThere() async throws {
        let (root, _) = try makeRoot()
        let provider = try root.plugin(FunctionPlugin<NoConfig>(name: "eu-provider") { _, _, scope in
            try scope.ctx.isolate(FooKey.name, realm: .label("eu")).provide(FooKey.self, Box(1))
        })
        try await provider.await()
        let impl = try #require(root.reflect.store[ServiceSlot(name: FooKey.name, realm: .label("eu"))])
        #expect(impl.ctx.realm(for: FooKey.name) == .label("eu") && impl.ctx.fiber === provider)
        #expect(root.reflect.store[ServiceSlot(name: FooKey.name, realm: .root)] == nil)
    }

    @Test func theRegistryListsAPluginWhileItHasAFiberAndDropsItWithTheLast() async throws {
        let (root, _) = try makeRoot()
        let plugin = FunctionPlugin<NoConfig>(name: "twice") { _, _, _ in }
        #expect(!root.registry.has(plugin) && root.registry.size == 0 && root.registry.counter == 0)
        let first = try await root.plugin(plugin).await()
        let second = try await root.plugin(plugin).await()
        let runtime = try #require(root.registry.get(plugin))
        #expect(runtime.name == "twice" && runtime.identity == plugin.identity)
        #expect(runtime.fiberList.map(\.id) == [first.id, second.id])
        #expect(first.runtime == runtime && root.registry.runtimes == [runtime] && root.registry.size == 1)
        #expect(root.registry.counter == second.id)
        try await first.dispose()
        #expect(root.registry.get(plugin)?.fiberList.map(\.id) == [second.id])
        try await second.dispose()
        #expect(root.registry.get(plugin) == nil && !root.registry.has(plugin) && root.registry.runtimes.isEmpty)
    }

    @Test func theRegistryFindsAPluginTypeAndDeletingItDisposesEveryFiber() async throws {
        let (root, _) = try makeRoot()
        let a = try await root.plugin(Quiet.self).await()
        let b = try await root.plugin(PluginType(Quiet.self), rawConfig: nil).await()
        let other = try await root.plugin(FunctionPlugin<NoConfig>(name: "other") { _, _, _ in }).await()
        #expect(root.registry.get(Quiet.self)?.fiberList.map(\.id) == [a.id, b.id])
        #expect(root.registry.runtimes.map(\.name) == ["Quiet", "other"])
        let deleted = await root.registry.delete(Quiet.self)
        #expect(deleted?.identity == PluginType(Quiet.self).identity)
        #expect(a.state == .disposed && b.state == .disposed && other.state == .active)
        let otherRuntime = try #require(other.runtime)
        #expect(!root.registry.has(Quiet.self) && root.registry.has(otherRuntime.identity))
        #expect(await root.registry.delete(Quiet.self) == nil)
    }

    @Test func aFibersRuntimeIsNilForTheRootOnly() async throws {
        let (root, _) = try makeRoot()
        let child = try await root.plugin(FunctionPlugin<NoConfig>(name: "child") { _, _, _ in }).await()
        #expect(root.fiber.runtime == nil)
        #expect(child.runtime?.fiberList.first === child)
    }

    @Test func eventsSnapshotCountsAListenerWhileItsFiberIsLoaded() async throws {
        let (root, _) = try makeRoot()
        #expect(root.events.snapshot[Pinged.name] == nil)
        let listener = try root.plugin(FunctionPlugin<NoConfig>(name: "listener") { _, _, scope in
            try scope.ctx.on(Pinged.self) { _ in }
            try scope.ctx.on(Pinged.self) { _ in }
        })
        try await listener.await()
        #expect(root.events.snapshot[Pinged.name] == 2)
        try await listener.dispose()
        #expect(root.events.snapshot[Pinged.name] == nil)
    }

    @Test func aFibersParentIsTheContextItWasStartedFrom() async throws {
        let (root, _) = try makeRoot()
        let isolated = root.isolate(FooKey.name)
        let inner = Trail()
        let outer = try isolated.plugin(FunctionPlugin<NoConfig>(name: "outer") { _, _, scope in
            let child = try scope.ctx.plugin(FunctionPlugin<NoConfig>(name: "inner") { _, _, _ in })
            inner.add(child.parent === scope.ctx ? "inner's parent is outer's ctx" : "other parent")
        })
        try await outer.await()
        #expect(outer.parent === isolated && outer.parent.fiber === root.fiber)
        #expect(inner.entries == ["inner's parent is outer's ctx"])
        #expect(root.fiber.parent === root && root.fiber.parent.fiber === root.fiber)
    }

    @Test func aFibersStoreHoldsItsServicesWhileLoadedAndIsNilOtherwise() async throws {
        let (root, _) = try makeRoot()
        let consumer = try root.plugin(FunctionPlugin<NoConfig>(name: "consumer", inject: [FooKey.self]) { _, _, scope in
            try scope.ctx.provide(BarKey.self, Box(2))
        })
        #expect(consumer.store == nil)
        let provider = try root.plugin(FunctionPlugin<NoConfig>(name: "provider") { _, _, scope in try scope.ctx.provide(FooKey.self, Box(1)) })
        try await provider.await()
        try await consumer.await()
        let store = try #require(consumer.store)
        #expect(store[FooKey.name]?.fiber === provider && (store[FooKey.name]?.value as? Box)?.value == 1)
        #expect(store[BarKey.name]?.fiber === consumer && store.count == 2)
        try await provider.dispose()
        await root.settled()
        #expect(consumer.state == .pending && consumer.store == nil)
        try await consumer.dispose()
        #expect(consumer.store == nil)
    }

    @Test func aFibersInjectCarriesEachInjectionsConfig() async throws {
        let (root, _) = try makeRoot()
        let plugin = FunctionPlugin<NoConfig>(
            name: "toned", inject: [BarKey.self], injections: [Injection(FooKey.self, config: Tone(loud: true))]
        ) { _, _, _ in }
        let fiber = try root.plugin(plugin)
        #expect(Set(fiber.inject.keys) == [FooKey.name, BarKey.name])
        let foo = fiber.inject[FooKey.name] ?? nil
        #expect(foo as? Tone == Tone(loud: true))
        let bar = try #require(fiber.inject[BarKey.name])
        #expect(bar == nil)
        #expect(root.fiber.inject.isEmpty)
    }

    @Test func inertiaIsSetWhileATransitionRunsAndAwaitingItWaitsForIt() async throws {
        let (root, _) = try makeRoot()
        let gate = Gate()
        let fiber = try root.plugin(FunctionPlugin<NoConfig>(name: "slow") { _, _, _ in await gate.pass() })
        await gate.reached()
        let inertia = try #require(fiber.inertia)
        #expect(fiber.state == .loading)
        let waited = Task { @CordisActor in
            await inertia.value
            return fiber.state
        }
        gate.open()
        #expect(try await withinDeadline("the transition") { await waited.value } == .active)
        #expect(fiber.inertia == nil)
    }
}
