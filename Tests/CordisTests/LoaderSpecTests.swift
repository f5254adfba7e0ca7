import CordisJSON
import Testing

@testable import Cordis

// cordis's loader specs (packages/loader/tests: index, group, isolate), rewritten. The specs' call
// counts are kept exactly: `foo N calls` is `spy.calls("foo")`, `dispose N calls` is
// `spy.disposals(...)`; counters are reset where the spec resets them (after each step).

@CordisActor
private func startLoader(_ catalog: PluginCatalog, _ entries: [Entry] = []) async throws -> (Loader, InMemoryEntryStore) {
    let root = Context()
    let store = InMemoryEntryStore(EntryTree(entries: entries))
    let loader = Loader(ctx: root, catalog: catalog, store: store)
    try await loader.start()
    return (loader, store)
}

@Suite("Loader: basic support") @CordisActor
struct LoaderIndexSpecTests {
    let spy = LoaderSpy()

    var catalog: PluginCatalog {
        var catalog = PluginCatalog()
        for name in ["foo", "bar", "qux"] { catalog.registerCounted(name, spy: spy) }
        return catalog
    }

    @Test func initiatesUpdatesAndWritesBackSelfUpdateAndSelfDispose() async throws {
        // loader initiate
        let (loader, store) = try await startLoader(catalog, [
            Entry(id: "1", plugin: "foo"),
            Entry(id: "2", children: [
                Entry(id: "3", plugin: "bar", config: ["a": 1]),
                Entry(id: "4", plugin: "qux", disabled: true),
            ]),
        ])
        #expect(loader.fiber(for: "1")?.state == .active)
        #expect(loader.fiber(for: "3")?.state == .active)
        #expect(loader.fiber(for: "4") == nil)
        #expect(spy.calls("foo") == 1 && spy.calls("bar") == 1 && spy.calls("qux") == 0)
        spy.reset()

        // loader update: group 2 removed, 4 now at the top level and enabled
        let foo = try #require(loader.fiber(for: "1"))
        try store.save(EntryTree(entries: [Entry(id: "1", plugin: "foo"), Entry(id: "4", plugin: "qux")]))
        try await loader.reload()
        #expect(loader.fiber(for: "1") === foo)
        #expect(loader.fiber(for: "3") == nil)
        #expect(loader.fiber(for: "4")?.state == .active)
        #expect(spy.calls("foo") == 0 && spy.calls("bar") == 0 && spy.calls("qux") == 1)
        #expect(spy.disposals("bar") == 1)

        // plugin self-update: the config is written back to the entry and saved
        try await foo.update(JSONValue.object(["a": 3]))
        await loader.settled()
        #expect(store.stored.entries == [Entry(id: "1", plugin: "foo", config: ["a": 3]), Entry(id: "4", plugin: "qux")])

        // plugin self-dispose: the entry is marked disabled and saved
        try await foo.dispose()
        await loader.settled()
        #expect(store.stored.entries == [
            Entry(id: "1", plugin: "foo", disabled: true, config: ["a": 3]), Entry(id: "4", plugin: "qux"),
        ])
        #expect(loader.status.first?.state == nil)
    }
}

@Suite("Loader: groups") @CordisActor
struct LoaderGroupSpecTests {
    let spy = LoaderSpy()

    var catalog: PluginCatalog {
        var catalog = PluginCatalog()
        catalog.registerCounted("foo", spy: spy)
        return catalog
    }

    @Test func disablingAndEnablingInnerAndOuterGroupsStartsAndStopsExactlyTheirEntries() async throws {
        let (loader, _) = try await startLoader(catalog)
        // initialize
        try await loader.add(Entry(id: "outer", children: [
            Entry(id: "outer-foo", plugin: "foo"),
            Entry(id: "inner", children: [Entry(id: "inner-foo", plugin: "foo")]),
        ]))
        #expect(loader.fiber(for: "outer") != nil && loader.fiber(for: "inner") != nil)
        #expect(spy.calls("foo") == 2 && spy.disposals("foo") == 0)
        #expect(loader.status.count == 4)
        spy.reset()

        // disable inner
        try await loader.setDisabled(id: "inner", true)
        #expect(spy.calls("foo") == 0 && spy.disposals("foo") == 1)
        #expect(loader.status.count == 4)
        spy.reset()

        // disable outer
        try await loader.setDisabled(id: "outer", true)
        #expect(spy.calls("foo") == 0 && spy.disposals("foo") == 1)
        #expect(loader.status.count == 4)
        spy.reset()

        // enable inner: outer is still disabled
        try await loader.setDisabled(id: "inner", false)
        #expect(spy.calls("foo") == 0 && spy.disposals("foo") == 0)
        #expect(loader.status.count == 4)
        spy.reset()

        // enable outer
        try await loader.setDisabled(id: "outer", false)
        #expect(spy.calls("foo") == 2 && spy.disposals("foo") == 0)
        #expect(loader.status.count == 4)
    }

    @Test func movingAnEntryBetweenGroupsReloadsItOnlyWhenItsEnabledStateChanges() async throws {
        let (loader, _) = try await startLoader(catalog, [
            Entry(id: "id", plugin: "foo"),
            Entry(id: "alpha", children: [
                Entry(id: "beta", disabled: true, children: [Entry(id: "gamma", children: [])]),
            ]),
        ])
        // initialize
        #expect(spy.calls("foo") == 1 && spy.disposals("foo") == 0)
        #expect(loader.status.count == 4)
        spy.reset()

        // enabled -> enabled
        let fiber = loader.fiber(for: "id")
        try await loader.move(id: "id", toParent: "alpha")
        #expect(spy.calls("foo") == 0 && spy.disposals("foo") == 0)
        #expect(loader.fiber(for: "id") === fiber)
        #expect(loader.status.first { $0.id == "id" }?.parent == "alpha")
        spy.reset()

        // enabled -> disabled
        try await loader.move(id: "id", toParent: "beta")
        #expect(spy.calls("foo") == 0 && spy.disposals("foo") == 1)
        spy.reset()

        // disabled -> disabled
        try await loader.move(id: "id", toParent: "gamma")
        #expect(spy.calls("foo") == 0 && spy.disposals("foo") == 0)
        spy.reset()

        // disabled -> enabled
        try await loader.move(id: "id", toParent: nil)
        #expect(spy.calls("foo") == 1 && spy.disposals("foo") == 0)
        #expect(loader.status.count == 4)
    }
}

/// The provider of `bar` in cordis's basic isolation spec: a plugin type that provides itself.
@CordisActor @Service(LoaderBarKey.self)
final class LoaderBar {}

enum LoaderBarKey: ServiceKey {
    typealias Value = LoaderBar
    static let name = "bar"
}

@Suite("Loader: service isolation") @CordisActor
struct LoaderIsolationSpecTests {
    let spy = LoaderSpy()

    /// `foo` injects `bar`; `bar` is a function plugin providing its config as `bar`.
    var catalog: PluginCatalog {
        var catalog = PluginCatalog()
        catalog.registerCounted("foo", spy: spy, inject: ["bar"])
        catalog.registerCounted("bar", spy: spy, provides: ["bar"])
        catalog.register(LoaderBar.self, as: "bar-service")
        return catalog
    }

    /// Applies `change`, then checks the spec's `foo` and `dispose` counts and resets them.
    func expectCounts(
        foo: Int, dispose: Int, sourceLocation: SourceLocation = #_sourceLocation, _ change: () async throws -> Void
    ) async throws {
        spy.reset()
        try await change()
        #expect(spy.calls("foo") == foo, "foo calls", sourceLocation: sourceLocation)
        #expect(spy.disposals("foo") == dispose, "dispose calls", sourceLocation: sourceLocation)
    }

    @Test func isolationOnInjectorAndProviderReloadsOnlyWhenRelevant() async throws {
        let (loader, _) = try await startLoader(catalog)
        // initiate
        try await expectCounts(foo: 1, dispose: 0) {
            try await loader.add(Entry(id: "provider", plugin: "bar-service"))
            try await loader.add(Entry(id: "injector", plugin: "foo"))
        }
        // add isolate on injector (relevant)
        try await expectCounts(foo: 0, dispose: 1) { try await loader.update(id: "injector", isolate: ["bar": .local]) }
        // add isolate on injector (irrelevant)
        try await expectCounts(foo: 0, dispose: 0) {
            try await loader.update(id: "injector", isolate: ["bar": .local, "qux": .local])
        }
        // remove isolate on injector (relevant)
        try await expectCounts(foo: 1, dispose: 0) { try await loader.update(id: "injector", isolate: ["qux": .local]) }
        // remove isolate on injector (irrelevant)
        try await expectCounts(foo: 0, dispose: 0) { try await loader.update(id: "injector", isolate: [:]) }
        // add isolate on provider (relevant)
        try await expectCounts(foo: 0, dispose: 1) { try await loader.update(id: "provider", isolate: ["bar": .local]) }
        // add isolate on provider (irrelevant)
        try await expectCounts(foo: 0, dispose: 0) {
            try await loader.update(id: "provider", isolate: ["bar": .local, "qux": .local])
        }
        // remove isolate on provider (relevant)
        try await expectCounts(foo: 1, dispose: 0) { try await loader.update(id: "provider", isolate: ["qux": .local]) }
        // remove isolate on provider (irrelevant)
        try await expectCounts(foo: 0, dispose: 0) { try await loader.update(id: "provider", isolate: [:]) }
    }

    @Test func groupsGivePrivateAndLabelledRealmsToTheirSubtrees() async throws {
        let (loader, _) = try await startLoader(catalog)
        // add isolate group
        try await expectCounts(foo: 0, dispose: 0) {
            try await loader.add(Entry(id: "alpha", isolate: ["bar": .local], children: [
                Entry(id: "bar-alpha", plugin: "bar", config: ["value": "alpha"]),
            ]))
            try await loader.add(Entry(id: "beta", isolate: ["bar": .shared("beta")], children: [
                Entry(id: "bar-beta", plugin: "bar", config: ["value": "beta"]),
            ]))
        }
        #expect(loader.fiber(for: "bar-alpha")?.state == .active)
        #expect(loader.fiber(for: "bar-beta")?.state == .active)

        // update isolate group (no change)
        let providers = (loader.fiber(for: "bar-alpha"), loader.fiber(for: "bar-beta"))
        try await expectCounts(foo: 0, dispose: 0) { try await loader.update(id: "alpha", isolate: ["bar": .local]) }
        #expect(loader.fiber(for: "bar-alpha") === providers.0 && loader.fiber(for: "bar-beta") === providers.1)
        #expect(providers.0?.state == .active && providers.1?.state == .active)

        // realm reference
        try await expectCounts(foo: 2, dispose: 0) {
            try await loader.add(Entry(id: "nested1", plugin: "foo"), parent: "alpha")
            try await loader.add(Entry(id: "nested2", plugin: "foo", isolate: ["bar": .shared("beta")]), parent: "alpha")
            try await loader.add(Entry(id: "nested3", plugin: "foo", isolate: ["bar": .local]), parent: "alpha")
        }
        #expect(loader.fiber(for: "nested1")?.state == .active)
        #expect(barValue(loader.fiber(for: "nested1")) == "alpha")
        #expect(loader.fiber(for: "nested2")?.state == .active)
        #expect(barValue(loader.fiber(for: "nested2")) == "beta")
        #expect(loader.fiber(for: "nested3")?.state == .pending)
        #expect(barValue(loader.fiber(for: "nested3")) == nil)
    }

    @Test func nestedRealmsAreNotReloadedByAnIrrelevantOuterIsolation() async throws {
        let (loader, _) = try await startLoader(catalog)
        try await expectCounts(foo: 2, dispose: 0) {
            try await loader.add(Entry(id: "outer", children: [
                Entry(id: "inner", isolate: ["bar": .shared("custom")], children: [
                    Entry(id: "bar", plugin: "bar", config: ["value": "custom"]),
                ]),
            ]))
            try await loader.add(Entry(id: "alpha", plugin: "foo", isolate: ["bar": .shared("custom")]))
            try await loader.add(Entry(id: "beta", plugin: "foo"), parent: "inner")
        }
        #expect(barValue(loader.fiber(for: "alpha")) == "custom")
        #expect(barValue(loader.fiber(for: "beta")) == "custom")
        try await expectCounts(foo: 0, dispose: 0) { try await loader.update(id: "outer", isolate: ["bar": .shared("custom")]) }
        try await expectCounts(foo: 0, dispose: 0) { try await loader.update(id: "outer", isolate: [:]) }
    }

    @Test func changingAGroupsRealmMovesItsInjectorToTheOtherProvider() async throws {
        let (loader, _) = try await startLoader(catalog)
        try await expectCounts(foo: 1, dispose: 0) {
            try await loader.add(Entry(id: "bar-alpha", plugin: "bar", isolate: ["bar": .shared("alpha")], config: ["value": "alpha"]))
            try await loader.add(Entry(id: "bar-beta", plugin: "bar", isolate: ["bar": .shared("beta")], config: ["value": "beta"]))
            try await loader.add(Entry(id: "group", isolate: ["bar": .shared("alpha")], children: [Entry(id: "foo", plugin: "foo")]))
        }
        #expect(barValue(loader.fiber(for: "foo")) == "alpha")
        try await expectCounts(foo: 1, dispose: 1) { try await loader.update(id: "group", isolate: ["bar": .shared("beta")]) }
        #expect(barValue(loader.fiber(for: "foo")) == "beta")
    }

    @Test func changingAGroupsRealmMovesItsProviderToTheOtherInjectors() async throws {
        let (loader, _) = try await startLoader(catalog)
        try await expectCounts(foo: 1, dispose: 0) {
            try await loader.add(Entry(id: "foo-alpha", plugin: "foo", isolate: ["bar": .shared("alpha")]))
            try await loader.add(Entry(id: "foo-beta", plugin: "foo", isolate: ["bar": .shared("beta")]))
            try await loader.add(Entry(id: "group", isolate: ["bar": .shared("alpha")], children: [
                Entry(id: "bar", plugin: "bar", config: ["value": "x"]),
            ]))
        }
        #expect(loader.fiber(for: "foo-alpha")?.state == .active)
        #expect(loader.fiber(for: "foo-beta")?.state == .pending)
        try await expectCounts(foo: 1, dispose: 1) { try await loader.update(id: "group", isolate: ["bar": .shared("beta")]) }
        #expect(loader.fiber(for: "foo-alpha")?.state == .pending)
        #expect(loader.fiber(for: "foo-beta")?.state == .active)
    }

    @Test func transferringInjectorAndProviderInAndOutOfAnIsolatingGroup() async throws {
        let (loader, _) = try await startLoader(catalog)
        // initiate
        try await expectCounts(foo: 1, dispose: 0) {
            try await loader.add(Entry(id: "group", isolate: ["bar": .local], children: []))
            try await loader.add(Entry(id: "provider", plugin: "bar-service"))
            try await loader.add(Entry(id: "injector", plugin: "foo"))
        }
        // transfer injector into group
        try await expectCounts(foo: 0, dispose: 1) { try await loader.move(id: "injector", toParent: "group") }
        // transfer provider into group
        try await expectCounts(foo: 1, dispose: 0) { try await loader.move(id: "provider", toParent: "group") }
        // transfer injector out of group
        try await expectCounts(foo: 0, dispose: 1) { try await loader.move(id: "injector", toParent: nil) }
        // transfer provider out of group
        try await expectCounts(foo: 1, dispose: 0) { try await loader.move(id: "provider", toParent: nil) }
    }
}
