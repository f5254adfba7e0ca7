import CordisJSON
import Foundation
import Testing

@testable import Cordis

/// A custom event a plugin awaits with `parallel` from its own `apply`.
private enum SelfRequestEvent: EventKey {
    typealias Args = Void
    static var name: String { "test/self-request" }
}

/// A plugin ending, restarting or updating itself from its own code (`apply`, a listener, a disposer):
/// the request is applied when the fiber's current transition ends, never waited for from inside it.
@Suite("Fiber: requests from its own code", .timeLimit(.minutes(1))) @CordisActor
struct FiberSelfRequestTests {
    @Test func aPluginThatDisposesItselfInApplyReachesDisposedRunningItsDisposersNewestFirst() async throws {
        let (root, _) = try makeRoot()
        let trail = Trail()
        let fiber = try root.plugin(FunctionPlugin<NoConfig>(name: "quitter") { _, _, scope in
            try scope.collect { trail.add("first disposer") }
            try scope.collect { trail.add("second disposer") }
            try await scope.ctx.fiber.dispose()
            trail.add("apply returned")
        })
        try await withinDeadline("the self-disposing fiber settling") { try await fiber.await() }
        #expect(fiber.state == .disposed)
        #expect(fiber.disposeReason == .explicit)
        #expect(trail.entries == ["apply returned", "second disposer", "first disposer"])
        try await withinDeadline("the world settling") { await root.settled() }
        #expect(!root.fibers.contains { $0 === fiber })
    }

    @Test func aPluginThatRestartsItselfInApplyRestartsOnce() async throws {
        let (root, _) = try makeRoot()
        let trail = Trail()
        var loads = 0
        let fiber = try root.plugin(FunctionPlugin<NoConfig>(name: "restarter") { _, _, scope in
            loads += 1
            let life = loads
            trail.add("apply \(life)")
            try scope.collect { trail.add("dispose \(life)") }
            if life == 1 { try await scope.ctx.fiber.restart() }
        })
        try await withinDeadline("the self-restarting fiber settling") { try await fiber.await() }
        #expect(fiber.state == .active)
        #expect(trail.entries == ["apply 1", "dispose 1", "apply 2"])
    }

    @Test func aPluginThatUpdatesItsConfigInApplyRestartsOnceWithTheNewConfig() async throws {
        let (root, _) = try makeRoot()
        let seen = Cordis.Box<[Int]>([])
        let fiber = try root.plugin(FunctionPlugin<Int>(name: "updater") { ctx, config, _ in
            seen.value.append(config)
            if config == 1 { try await ctx.fiber.update(2) }
        }, config: 1)
        try await withinDeadline("the self-updating fiber settling") { try await fiber.await() }
        #expect(fiber.state == .active)
        #expect(seen.value == [1, 2])
        #expect(fiber.config as? Int == 2)
    }

    @Test func aPluginThatDisposesItselfFromItsOwnListenerReachesDisposed() async throws {
        let (root, _) = try makeRoot()
        let trail = Trail()
        let fiber = try root.plugin(FunctionPlugin<NoConfig>(name: "listener-quitter") { _, _, scope in
            let ctx = scope.ctx
            try ctx.on(SelfRequestEvent.self) { (_: Void) async throws in
                try await ctx.fiber.dispose()
                trail.add("listener returned")
            }
            try scope.collect { trail.add("disposer") }
            try await ctx.parallel(SelfRequestEvent.self)
            trail.add("apply returned")
        })
        try await withinDeadline("the fiber disposed by its listener settling") { try await fiber.await() }
        #expect(fiber.state == .disposed)
        #expect(trail.entries == ["listener returned", "apply returned", "disposer"])
    }

    @Test func aPluginThatDisposesItselfFromADisposerEndsDisposedAfterTheRestart() async throws {
        let (root, _) = try makeRoot()
        var loads = 0
        let fiber = try root.plugin(FunctionPlugin<NoConfig>(name: "disposer-quitter") { _, _, scope in
            loads += 1
            let ctx = scope.ctx
            try scope.collect { try await ctx.fiber.dispose() }
        })
        try await fiber.await()
        try await withinDeadline("the restart whose disposer disposes the fiber") { try await fiber.restart() }
        #expect(fiber.state == .disposed)
        #expect(fiber.disposeReason == .explicit)
        #expect(loads == 1)
    }

    @Test func aPluginThatUpdatesItselfFromADisposerLoadsOnceMoreWithTheNewConfig() async throws {
        let (root, _) = try makeRoot()
        let seen = Cordis.Box<[Int]>([])
        let fiber = try root.plugin(FunctionPlugin<Int>(name: "disposer-updater") { ctx, config, scope in
            seen.value.append(config)
            if config == 1 { try scope.collect { try await ctx.fiber.update(2) } }
        }, config: 1)
        try await fiber.await()
        try await withinDeadline("the restart whose disposer updates the config") { try await fiber.restart() }
        #expect(fiber.state == .active)
        #expect(seen.value == [1, 2])
    }

    @Test func aDisposalByTheParentIsNotMadeExplicitByASelfDisposeInADisposer() async throws {
        let (root, _) = try makeRoot()
        var child: Fiber?
        let parent = try root.plugin(FunctionPlugin<NoConfig>(name: "parent") { _, _, scope in
            child = try scope.ctx.plugin(FunctionPlugin<NoConfig>(name: "child") { _, _, inner in
                let ctx = inner.ctx
                try inner.collect { try await ctx.fiber.dispose() }
            })
        })
        try await parent.await()
        let loaded = try #require(child)
        try await loaded.await()
        try await withinDeadline("the parent's disposal") { try await parent.dispose() }
        #expect(loaded.state == .disposed)
        #expect(loaded.disposeReason == .parent)
    }
}

private struct UpdaterConfig: Codable, Sendable {
    var step: Int
}

@Suite("Loader: a plugin that ends or updates itself", .timeLimit(.minutes(1))) @CordisActor
struct LoaderSelfDisposalTests {
    var catalog: PluginCatalog {
        var catalog = PluginCatalog()
        catalog.register(FunctionPlugin<NoConfig>(name: "quitter") { _, _, scope in
            try await scope.ctx.fiber.dispose()
        }, as: "quitter")
        catalog.register(FunctionPlugin<NoConfig>(name: "plain") { _, _, _ in }, as: "plain")
        catalog.register(FunctionPlugin<NoConfig>(name: "disposer-quitter") { _, _, scope in
            let ctx = scope.ctx
            try scope.collect { try await ctx.fiber.dispose() }
        }, as: "disposer-quitter")
        catalog.register(FunctionPlugin<UpdaterConfig>(name: "updater") { _, config, scope in
            if config.step == 1 { try await scope.ctx.fiber.update(UpdaterConfig(step: 2)) }
        }, as: "updater")
        return catalog
    }

    @Test func anEntryWhosePluginDisposesItselfInApplyEndsDisabledInTheFileAndLaterChangesComplete() async throws {
        let folder = try LoaderFolder()
        let loader = Loader(ctx: Context(), catalog: catalog, store: FileEntryStore(url: folder.entries))
        try await loader.start()
        try await withinDeadline("adding the self-disposing entry") {
            try await loader.add(Entry(id: "quitter", plugin: "quitter"))
        }
        try await withinDeadline("the loader settling") { await loader.settled() }
        #expect(loader.fiber(for: "quitter") == nil)
        #expect(try FileEntryStore(url: folder.entries).load().entry(id: "quitter")?.disabled == true)
        #expect(loader.entry(id: "quitter")?.disabled == true)
        try await withinDeadline("a later change") { try await loader.add(Entry(id: "plain", plugin: "plain")) }
        #expect(loader.fiber(for: "plain")?.state == .active)
    }

    @Test func anEntryWhosePluginUpdatesItsConfigInApplyIsSavedWithTheNewConfig() async throws {
        let folder = try LoaderFolder()
        let loader = Loader(ctx: Context(), catalog: catalog, store: FileEntryStore(url: folder.entries))
        try await loader.start()
        try await withinDeadline("adding the self-updating entry") {
            try await loader.add(Entry(id: "updater", plugin: "updater", config: ["step": 1]))
        }
        try await withinDeadline("the loader settling") { await loader.settled() }
        #expect(loader.fiber(for: "updater")?.state == .active)
        #expect((loader.fiber(for: "updater")?.config as? UpdaterConfig)?.step == 2)
        #expect(try FileEntryStore(url: folder.entries).load().entry(id: "updater")?.config == ["step": 2])
    }

    @Test func anEntryStoppedWithItsGroupIsNotMarkedDisabledEvenIfItsDisposerDisposesIt() async throws {
        let store = InMemoryEntryStore(EntryTree(entries: [
            Entry(id: "group", children: [Entry(id: "inner", plugin: "disposer-quitter")]),
        ]))
        let loader = Loader(ctx: Context(), catalog: catalog, store: store)
        try await withinDeadline("the loader's start") { try await loader.start() }
        try await withinDeadline("disabling the group") { try await loader.setDisabled(id: "group", true) }
        try await withinDeadline("the loader settling") { await loader.settled() }
        #expect(loader.fiber(for: "inner") == nil)
        #expect(store.stored.entry(id: "inner")?.disabled == false)
        #expect(store.stored.entry(id: "group")?.disabled == true)
    }

    @Test func anEntryWhosePluginDisposesItselfAtStartEndsDisabled() async throws {
        let store = InMemoryEntryStore(EntryTree(entries: [Entry(id: "quitter", plugin: "quitter")]))
        let loader = Loader(ctx: Context(), catalog: catalog, store: store)
        try await withinDeadline("the loader's start") { try await loader.start() }
        try await withinDeadline("the loader settling") { await loader.settled() }
        #expect(store.stored.entry(id: "quitter")?.disabled == true)
        try await withinDeadline("a later change") { try await loader.setDisabled(id: "quitter", false) }
        // Enabled again, it disposes itself again and is marked disabled again.
        try await withinDeadline("the loader settling") { await loader.settled() }
        #expect(store.stored.entry(id: "quitter")?.disabled == true)
    }
}
