import Cordis
import Foundation
import Testing

enum LoaderFooKey: ServiceKey {
    typealias Value = LoaderFoo
    static let name = "foo"
}

struct LabelConfig: Codable, Sendable, Equatable {
    var label: String?
}

/// The `foo` service, written with the macros.
@CordisActor @Service(LoaderFooKey.self)
final class LoaderFoo {
    typealias Config = LabelConfig
}

/// A consumer of `foo`, written with the macros.
@CordisActor @Plugin
final class LoaderBar {
    typealias Config = LabelConfig
    @Inject(LoaderFooKey.self) var foo: LoaderFoo

    func apply(_ scope: EffectScope) async throws {
        // The injected service can be read while the fiber runs.
        _ = try foo
    }
}

/// A plugin with no service and no config.
@CordisActor @Plugin
final class LoaderPlain {
    func apply(_ scope: EffectScope) async throws {}
}

/// Ports cordis-ios's `Tests/CordisTests/LoaderTests.swift`: a Loader over an `InMemoryEntryStore`
/// starts its entries, and applies disables, config updates, plugin changes and group edits, saving
/// each to the store.
@Suite("LoaderTests")
@CordisActor
struct LoaderTests {
    private func makeCatalog() -> PluginCatalog {
        var catalog = PluginCatalog()
        catalog.register(LoaderFoo.self, as: "foo")
        catalog.register(LoaderBar.self, as: "bar")
        catalog.register(LoaderPlain.self, as: "plain")
        return catalog
    }

    /// A started Loader over `entries`, with its root context and its store.
    private func started(_ entries: [Entry]) async throws -> (root: Context, loader: Loader, store: InMemoryEntryStore) {
        let root = Context()
        let store = InMemoryEntryStore(entries)
        let loader = Loader(ctx: root, catalog: makeCatalog(), store: store)
        try await loader.start()
        return (root, loader, store)
    }

    /// Ports cordis-ios LoaderTests "start activates entries".
    @Test("start activates entries")
    func startingRunsEveryEntry() async throws {
        let (_, loader, _) = try await started([
            Entry(id: "a", plugin: "foo"),
            Entry(id: "b", plugin: "bar"),
        ])
        #expect(loader.fiber(for: "a")?.state == .active)
        #expect(loader.fiber(for: "b")?.state == .active)
        #expect(loader.fiber(for: "b")?.name == "LoaderBar")
    }

    /// Ports cordis-ios LoaderTests "disable then enable".
    @Test("disable then enable")
    func disablingAProviderSendsItsConsumerToPendingUntilEnabled() async throws {
        let (_, loader, store) = try await started([
            Entry(id: "a", plugin: "foo"),
            Entry(id: "b", plugin: "bar"),
        ])
        let provider = try #require(loader.fiber(for: "a"))
        let consumer = try #require(loader.fiber(for: "b"))

        try await loader.setDisabled(id: "a", true)
        #expect(provider.state == .disposed)
        #expect(loader.fiber(for: "a") == nil)
        #expect(consumer.state == .pending)
        #expect(store.entries.first?.disabled == true)
        let saved = String(decoding: try JSONEncoder().encode(store.entries), as: UTF8.self)
        #expect(saved.contains("\"disabled\":true"))

        try await loader.setDisabled(id: "a", false)
        #expect(loader.fiber(for: "a")?.state == .active)
        #expect(consumer.state == .active)
        #expect(store.entries.first?.disabled == false)
    }

    /// Ports cordis-ios LoaderTests "update writes config".
    @Test("update writes config")
    func aConfigChangedByTheLoaderOrTheFiberIsSaved() async throws {
        let (_, loader, store) = try await started([
            Entry(id: "a", plugin: "foo"),
            Entry(id: "b", plugin: "bar", config: .object(["label": .string("old")])),
        ])
        let consumer = try #require(loader.fiber(for: "b"))
        #expect((consumer.config as? LabelConfig)?.label == "old")

        try await loader.update(id: "b", config: .object(["label": .string("new")]))
        #expect(loader.fiber(for: "b") === consumer)
        #expect((consumer.config as? LabelConfig)?.label == "new")
        #expect(consumer.state == .active)
        #expect(store.entries[1].config == .object(["label": .string("new")]))

        // A config the fiber is given directly goes back into its entry.
        try await consumer.update(LabelConfig(label: "direct"))
        #expect(store.entries[1].config == .object(["label": .string("direct")]))
        #expect(loader.entry("b")?.config == .object(["label": .string("direct")]))
    }

    /// Ports cordis-ios LoaderTests "plugin rename recreates the fiber".
    @Test("plugin rename recreates the fiber")
    func anEntryGivenAnotherPluginGetsANewFiber() async throws {
        let (_, loader, _) = try await started([Entry(id: "x", plugin: "plain")])
        let before = try #require(loader.fiber(for: "x"))

        var entries = loader.entries
        entries[0].plugin = "foo"
        try await loader.reconcile(entries)
        let after = try #require(loader.fiber(for: "x"))
        #expect(before.state == .disposed)
        #expect(after !== before)
        #expect(after.state == .active)
        #expect(after.name == "foo")
    }

    /// Ports cordis-ios LoaderTests "group reconciles children by id".
    @Test("group reconciles children by id")
    func aGroupKeepsTheFibersOfTheChildrenItKeeps() async throws {
        let (root, loader, store) = try await started([
            Entry(id: "g", plugin: "group", children: [
                Entry(id: "c1", plugin: "foo"),
                Entry(id: "c2", plugin: "bar"),
            ]),
        ])
        let group = try #require(loader.fiber(for: "g"))
        let c1 = try #require(loader.fiber(for: "c1"))
        let c2 = try #require(loader.fiber(for: "c2"))
        #expect(group.state == .active)
        #expect(c1.state == .active)
        #expect(c2.state == .active)
        #expect(c2.parent.fiber === group)

        try await loader.add(Entry(id: "c3", plugin: "plain"), parent: "g")
        #expect(loader.fiber(for: "c1") === c1)
        #expect(loader.fiber(for: "c3")?.state == .active)
        #expect(store.entries[0].children?.map(\.id) == ["c1", "c2", "c3"])

        try await loader.remove(id: "c1")
        #expect(c1.state == .disposed)
        #expect(c2.state == .pending)
        #expect(loader.fiber(for: "c2") === c2)

        try await loader.setDisabled(id: "g", true)
        #expect(group.state == .disposed)
        #expect(c2.state == .disposed)
        #expect(root.registry.get(LoaderBar.self) == nil)
    }

    /// Ports cordis-ios LoaderTests "unknown plugin is logged and skipped".
    @Test("unknown plugin is logged and skipped")
    func anEntryOfAPluginNotInTheCatalogIsLoggedAndKept() async throws {
        let (root, loader, store) = try await started([
            Entry(id: "u", plugin: "missing"),
            Entry(id: "a", plugin: "foo"),
        ])
        #expect(loader.fiber(for: "u") == nil)
        #expect(loader.fiber(for: "a")?.state == .active)
        #expect(root.logger.buffer.contains {
            $0.level == .error && $0.text == "plugin \"missing\" is not in the catalog"
        })
        #expect(store.entries.map(\.id) == ["u", "a"])
    }

    /// Ports cordis-ios LoaderTests "shared isolation realm".
    @Test("shared isolation realm")
    func entriesIsolatedIntoOneRealmShareItsProvider() async throws {
        let (root, loader, _) = try await started([
            Entry(id: "s1", plugin: "foo", isolate: ["foo": .shared("x")]),
            Entry(id: "s2", plugin: "bar", isolate: ["foo": .shared("x")]),
            Entry(id: "s3", plugin: "bar"),
        ])
        #expect(loader.fiber(for: "s2")?.state == .active)
        #expect(loader.fiber(for: "s3")?.state == .pending)
        #expect(root.get(LoaderFooKey.self, strict: false) == nil)
    }
}
