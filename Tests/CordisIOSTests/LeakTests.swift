import Cordis
import Testing

/// A plugin that keeps itself alive through its listener and disposer while loaded, and tells the test
/// whether its last instance still exists.
@CordisActor
final class LeakProbe: Plugin {
    static weak var lastInstance: LeakProbe?
    let ctx: Context

    init(ctx: Context, config: NoConfig) {
        self.ctx = ctx
        Self.lastInstance = self
    }

    func apply(_ scope: EffectScope) async throws {
        try ctx.on(CustomEvent.self) { [unowned self] _ in _ = self.ctx }
        try scope.collect { [self] in _ = self.ctx }
    }
}

/// A plugin that does nothing, for the Loader to start and stop.
@CordisActor
final class LoaderLeakProbe: Plugin {
    init(ctx: Context, config: NoConfig) {}

    func apply(_ scope: EffectScope) async throws {}
}

/// A weak reference to a fiber, to see it freed.
@CordisActor
final class WeakFiber {
    weak var fiber: Fiber?

    init(_ fiber: Fiber?) {
        self.fiber = fiber
    }
}

/// Ports cordis-ios's `Tests/CordisTests/LeakTests.swift` (its suite `FiberLeakTests`): a disposed
/// plugin's fiber, context and instance are freed, and a held fiber still answers as disposed.
@Suite("FiberLeakTests")
@CordisActor
struct LeakTests {
    /// Ports cordis-ios FiberLeakTests "a disposed plugin frees its fiber, context and instance".
    @Test("a disposed plugin frees its fiber, context and instance")
    func aDisposedPluginIsFreed() async throws {
        let root = Context()
        weak var weakFiber: Fiber?
        weak var weakContext: Context?
        do {
            let fiber = try await root.plugin(LeakProbe.self).await()
            weakFiber = fiber
            weakContext = fiber.ctx
            #expect(LeakProbe.lastInstance != nil)
            try await fiber.dispose()
        }
        try await quiescence(of: root)
        try await until("the disposed fiber, its context and its instance to be freed") {
            weakFiber == nil && weakContext == nil && LeakProbe.lastInstance == nil
        }
        #expect(weakFiber == nil)
        #expect(weakContext == nil)
        #expect(LeakProbe.lastInstance == nil)
    }

    /// Ports cordis-ios FiberLeakTests "toggling through the loader does not accumulate fibers".
    @Test("toggling through the loader does not accumulate fibers")
    func togglingAnEntryFreesEachFiberItStopped() async throws {
        var catalog = PluginCatalog()
        catalog.register(LoaderLeakProbe.self, as: "probe")
        let loader = Loader(
            ctx: Context(), catalog: catalog, store: InMemoryEntryStore([Entry(id: "p", plugin: "probe")]))
        try await loader.start()

        var stopped: [WeakFiber] = []
        for _ in 0..<50 {
            stopped.append(WeakFiber(loader.fiber(for: "p")))
            try await loader.setDisabled(id: "p", true)
            try await loader.setDisabled(id: "p", false)
        }
        try await quiescence(of: loader.ctx)
        try await until("the 50 stopped fibers to be freed") { stopped.allSatisfy { $0.fiber == nil } }
        #expect(stopped.allSatisfy { $0.fiber == nil })
        #expect(loader.fiber(for: "p")?.state == .active)
    }

    /// Ports cordis-ios FiberLeakTests "a held fiber still reports an inactive context after disposal".
    @Test("a held fiber still reports an inactive context after disposal")
    func aHeldDisposedFiberRefusesItsServices() async throws {
        let root = Context()
        try root.provide(Foo.self, Payload(bar: 1))
        let fiber = try await root.inject([Foo.self]) { _, _ in }.await()

        try await fiber.dispose()
        try await quiescence(of: root)
        expectError("cannot get required service \"foo\" in inactive context") { _ = try fiber.ctx[Foo.self] }
        #expect(fiber.ctx.fiber === fiber)
    }
}
