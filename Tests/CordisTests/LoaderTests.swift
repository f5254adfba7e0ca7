import CordisJSON
import Foundation
import Testing

@testable import Cordis

// The product page's example: a counter service and a badge that injects it.

enum LoaderCounterKey: ServiceKey {
    typealias Value = LoaderCounterService
    static let name = "counter"
}

@CordisActor
final class LoaderToolbar {
    static let shared = LoaderToolbar()
    var badges: [String] = []
    var starts: [Int] = []
}

@CordisActor @Service(LoaderCounterKey.self)
final class LoaderCounterService {
    struct Config: Codable, Sendable {
        var start = 0
        init(start: Int = 0) { self.start = start }
        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            start = try container.decodeIfPresent(Int.self, forKey: .start) ?? 0
        }
    }

    private(set) var value = 0

    func apply(_ scope: EffectScope) async throws {
        value = config.start
        LoaderToolbar.shared.starts.append(config.start)
    }
}

@CordisActor @Plugin
final class LoaderCounterBadge {
    @Inject(LoaderCounterKey.self) var counter: LoaderCounterService

    func apply(_ scope: EffectScope) async throws {
        let badge = "badge \(try counter.value)"
        LoaderToolbar.shared.badges.append(badge)
        try scope.collect { LoaderToolbar.shared.badges.removeAll { $0 == badge } }
    }
}

@CordisActor
private func exampleCatalog() -> PluginCatalog {
    var catalog = PluginCatalog()
    catalog.register(LoaderCounterService.self, as: "counter")
    catalog.register(LoaderCounterBadge.self, as: "badge")
    return catalog
}

private let exampleFile = """
    { "version": 1,
      "entries": [
        { "id": "counter", "plugin": "counter", "config": { "start": 5 } },
        { "id": "badge", "plugin": "badge", "x-note": "kept" } ] }

    """

@Suite("Loader", .serialized) @CordisActor
struct LoaderTests {
    init() {
        LoaderToolbar.shared.badges = []
        LoaderToolbar.shared.starts = []
    }

    @Test func theProductPageExampleWorksUnchanged() async throws {
        let folder = try LoaderFolder()
        try folder.write(exampleFile)
        let entriesURL = folder.entries
        let root = Context()

        var catalog = PluginCatalog()
        catalog.register(LoaderCounterService.self, as: "counter")
        catalog.register(LoaderCounterBadge.self, as: "badge")
        let loader = Loader(ctx: root, catalog: catalog, store: FileEntryStore(url: entriesURL))
        try await loader.start()
        #expect(LoaderToolbar.shared.badges == ["badge 5"])
        try await loader.setDisabled(id: "counter", true)
        // badge drops to pending; its toolbar badge is gone
        #expect(loader.fiber(for: "badge")?.state == .pending)
        #expect(LoaderToolbar.shared.badges.isEmpty)
        #expect(loader.fiber(for: "counter") == nil)
        let saved: EntryTree = try FileEntryStore(url: entriesURL).load()
        #expect(saved.entry(id: "counter")?.disabled == true)
        #expect(saved.entry(id: "badge")?.extra["x-note"] == "kept")
        #expect(loader.status == [
            EntryStatus(id: "counter", plugin: "counter", parent: nil, disabled: true, state: nil, error: nil,
                config: ["start": 5]),
            EntryStatus(
                id: "badge", plugin: "badge", parent: nil, disabled: false, state: .pending, error: nil,
                waiting: "waits for counter"),
        ])
    }

    @Test func aRejectedConfigNamesEntryAndPathAndChangesNeitherFileNorFiber() async throws {
        let folder = try LoaderFolder()
        try folder.write(exampleFile)
        let loader = Loader(ctx: Context(), catalog: exampleCatalog(), store: FileEntryStore(url: folder.entries))
        try await loader.start()
        let before = try folder.bytes()
        let counter = try #require(loader.fiber(for: "counter"))
        let loads = try await loadingTransitions(on: loader.ctx) {
            let error = await #expect(throws: LoaderError.self) {
                try await loader.update(id: "counter", config: ["start": "ten"])
            }
            #expect(error?.code == .invalidConfig)
            #expect(error?.message == "entry \"counter\": invalid config:\n  - expected integer, got string (at start)")
        }
        #expect(loads == 0)
        #expect(try folder.bytes() == before)
        #expect(loader.fiber(for: "counter") === counter)
        #expect(counter.state == .active)
        #expect((counter.config as? LoaderCounterService.Config)?.start == 5)
        #expect(loader.entry(id: "counter")?.config == ["start": 5])
    }

    @Test func aConfigChangeRestartsOnlyThatEntrysFiber() async throws {
        let (loader, store) = try await exampleLoader()
        let badge = loader.fiber(for: "badge")
        let loads = try await loadingTransitions(on: loader.ctx) {
            try await loader.update(id: "counter", config: ["start": 7])
        }
        // The counter restarts; its consumer follows it (it unloads while the provider restarts).
        #expect(LoaderToolbar.shared.starts == [5, 7])
        #expect(LoaderToolbar.shared.badges == ["badge 7"])
        #expect(loads == 2)
        #expect(loader.fiber(for: "badge") === badge)
        #expect(store.stored.entry(id: "counter")?.config == ["start": 7])
    }

    @Test func aSimulatedCrashBetweenWriteAndRenameKeepsTheOldFileAndTheFibers() async throws {
        let folder = try LoaderFolder()
        try folder.write(exampleFile)
        struct Crash: Error {}
        let store = FileEntryStore(url: folder.entries, beforeRename: { _ in throw Crash() })
        let loader = Loader(ctx: Context(), catalog: exampleCatalog(), store: store)
        try await loader.start()
        let before = try folder.bytes()
        let counter = loader.fiber(for: "counter")
        let error = await #expect(throws: LoaderError.self) { try await loader.setDisabled(id: "counter", true) }
        #expect(error?.code == .saveFailed)
        #expect(try folder.bytes() == before)
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.url.path) == ["entries.json"])
        #expect(loader.fiber(for: "counter") === counter)
        #expect(counter?.state == .active)
        #expect(loader.entry(id: "counter")?.disabled == false)
        #expect(LoaderToolbar.shared.badges == ["badge 5"])
    }

    @Test func aFileThatDoesNotParseStopsStartNamingLineAndColumnAndIsLeftAlone() async throws {
        let folder = try LoaderFolder()
        let corrupted = "{ \"version\": 1,\n  \"entries\": [ { \"id\": \"counter\" \"plugin\": \"counter\" } ] }\n"
        try folder.write(corrupted)
        let before = try folder.bytes()
        let root = Context()
        let loader = Loader(ctx: root, catalog: exampleCatalog(), store: FileEntryStore(url: folder.entries))
        let error = await #expect(throws: EntryStoreError.self) { try await loader.start() }
        #expect(error?.code == .unparsable)
        #expect(error?.line == 2)
        #expect(error?.column == 34)
        #expect(error?.message.contains(folder.entries.path) == true)
        #expect(error?.message.contains("line 2, column 34") == true)
        #expect(try folder.bytes() == before)
        #expect(root.fibers.count == 1)
        #expect(loader.isRunning == false)
    }

    @Test func aMissingFileIsAnEmptyTreeCreatedOnTheFirstSave() async throws {
        let folder = try LoaderFolder()
        let loader = Loader(ctx: Context(), catalog: exampleCatalog(), store: FileEntryStore(url: folder.entries))
        try await loader.start()
        #expect(loader.entries.isEmpty)
        #expect(!FileManager.default.fileExists(atPath: folder.entries.path))
        try await loader.add(Entry(id: "counter", plugin: "counter"))
        #expect(try FileEntryStore(url: folder.entries).load().entries == [Entry(id: "counter", plugin: "counter")])
        #expect(loader.fiber(for: "counter")?.state == .active)
    }

    @Test func duplicateAndMalformedIDsAreRejectedAndNothingChanges() async throws {
        let (loader, store) = try await exampleLoader()
        let saves = store.saveCount
        let duplicate = await #expect(throws: LoaderError.self) {
            try await loader.add(Entry(id: "counter", plugin: "badge"))
        }
        #expect(duplicate?.code == .duplicateID)
        #expect(duplicate?.message == "entry \"counter\": duplicate id")
        let nested = await #expect(throws: LoaderError.self) {
            try await loader.add(Entry(id: "group", children: [Entry(id: "badge", plugin: "badge")]))
        }
        #expect(nested?.code == .duplicateID)
        let malformed = await #expect(throws: LoaderError.self) { try await loader.add(Entry(id: "a b", plugin: "badge")) }
        #expect(malformed?.code == .invalidID)
        #expect(store.saveCount == saves)
        #expect(loader.status.map(\.id) == ["counter", "badge"])

        // A stored tree with a repeated id is refused by start() too.
        let bad = RecordingStore(EntryTree(entries: [
            Entry(id: "x", plugin: "counter"), Entry(id: "g", children: [Entry(id: "x", plugin: "badge")]),
        ]))
        let root = Context()
        let loaderOfBad = Loader(ctx: root, catalog: exampleCatalog(), store: bad)
        let refused = await #expect(throws: LoaderError.self) { try await loaderOfBad.start() }
        #expect(refused?.code == .duplicateID)
        #expect(bad.saved.isEmpty)
        #expect(root.fibers.count == 1)
    }

    @Test func aFailedSaveChangesNeitherTheStoreNorTheFibers() async throws {
        let (loader, store) = try await exampleLoader()
        struct DiskFull: Error, CustomStringConvertible { var description: String { "disk full" } }
        store.failSaves(with: DiskFull())
        let stored = store.stored
        let counter = loader.fiber(for: "counter")
        for change in [
            { try await loader.setDisabled(id: "counter", true) },
            { try await loader.update(id: "counter", config: ["start": 1]) },
            { try await loader.remove(id: "badge") },
            { try await loader.add(Entry(id: "other", plugin: "badge")) },
        ] as [@CordisActor () async throws -> Void] {
            let error = await #expect(throws: LoaderError.self) { try await change() }
            #expect(error?.code == .saveFailed)
            #expect(error?.message.contains("disk full") == true)
        }
        #expect(store.stored == stored)
        #expect(loader.tree == stored)
        #expect(loader.fiber(for: "counter") === counter)
        #expect(counter?.state == .active)
        #expect(LoaderToolbar.shared.starts == [5])
        #expect(LoaderToolbar.shared.badges == ["badge 5"])
    }

    @Test func twoConcurrentChangesAreBothAppliedInArrivalOrder() async throws {
        let store = RecordingStore(EntryTree(entries: [Entry(id: "counter", plugin: "counter", config: ["start": 5])]))
        let loader = Loader(ctx: Context(), catalog: exampleCatalog(), store: store)
        try await loader.start()
        let first = Task { try await loader.update(id: "counter", config: ["start": 1]) }
        let second = Task { try await loader.update(id: "counter", config: ["start": 2]) }
        try await first.value
        try await second.value
        #expect(store.saved.map { $0.entry(id: "counter")?.config } == [["start": 1], ["start": 2]])
        #expect(LoaderToolbar.shared.starts == [5, 1, 2])
        #expect(loader.entry(id: "counter")?.config == ["start": 2])
        #expect((loader.fiber(for: "counter")?.config as? LoaderCounterService.Config)?.start == 2)
        #expect(try store.load() == loader.tree)
    }

    @Test func stopDisposesEverythingAndMarksNoEntryDisabled() async throws {
        let (loader, store) = try await exampleLoader()
        let saves = store.saveCount
        let fibers = [loader.fiber(for: "counter"), loader.fiber(for: "badge")]
        await loader.stop()
        #expect(fibers.allSatisfy { $0?.state == .disposed })
        #expect(fibers.allSatisfy { $0?.disposeReason == .parent })
        #expect(LoaderToolbar.shared.badges.isEmpty)
        await loader.settled()
        #expect(store.saveCount == saves)
        #expect(store.stored.allEntries.allSatisfy { !$0.entry.disabled })
        #expect(loader.status.allSatisfy { $0.state == nil && !$0.disabled })
        let refused = await #expect(throws: LoaderError.self) { try await loader.setDisabled(id: "badge", true) }
        #expect(refused?.code == .notRunning)
    }

    @Test func aPluginThatDisposesItselfMarksItsEntryDisabled() async throws {
        let (loader, store) = try await exampleLoader()
        var changes: [EntryChange] = []
        try loader.ctx.on(LoaderEntryEvent.self) { changes.append($0) }
        let counter = try #require(loader.fiber(for: "counter"))
        try await counter.dispose()
        await loader.settled()
        #expect(store.stored.entry(id: "counter")?.disabled == true)
        #expect(loader.entry(id: "counter")?.disabled == true)
        #expect(loader.fiber(for: "badge")?.state == .pending)
        #expect(changes == [EntryChange(id: "counter", kind: .disabled)])
    }

    @Test func removingAGroupDisposesItsChildrenWithoutMarkingThemDisabled() async throws {
        let (loader, store) = try await exampleLoader()
        try await loader.add(Entry(id: "group", children: [Entry(id: "inner-badge", plugin: "badge")]))
        let inner = try #require(loader.fiber(for: "inner-badge"))
        #expect(inner.state == .active)
        try await loader.setDisabled(id: "group", true)
        #expect(inner.state == .disposed)
        #expect(store.stored.entry(id: "inner-badge")?.disabled == false)
        try await loader.remove(id: "group")
        #expect(store.stored.entry(id: "inner-badge") == nil)
        #expect(loader.status.map(\.id) == ["counter", "badge"])
    }

    @Test func anUnknownPluginInTheFileIsKeptAndReportedAndAddingOneIsRejected() async throws {
        let store = InMemoryEntryStore(EntryTree(entries: [
            Entry(id: "ghost", plugin: "nope", config: ["a": 1]), Entry(id: "counter", plugin: "counter"),
            Entry(id: "broken", plugin: "counter", config: ["start": "x"]),
        ]))
        let loader = Loader(ctx: Context(), catalog: exampleCatalog(), store: store)
        try await loader.start()
        let ghost = try #require(loader.status.first { $0.id == "ghost" })
        #expect(ghost.state == nil)
        #expect(ghost.error == "plugin \"nope\" is not in the catalog")
        let broken = try #require(loader.status.first { $0.id == "broken" })
        #expect(broken.state == nil)
        #expect(broken.error == "invalid config:\n  - expected integer, got string (at start)")
        #expect(loader.fiber(for: "counter")?.state == .active)

        try await loader.add(Entry(id: "badge", plugin: "badge"))
        #expect(store.stored.entry(id: "ghost") == Entry(id: "ghost", plugin: "nope", config: ["a": 1]))

        let rejected = await #expect(throws: LoaderError.self) { try await loader.add(Entry(id: "x", plugin: "nope")) }
        #expect(rejected?.code == .unknownPlugin)
        #expect(rejected?.message == "entry \"x\": plugin \"nope\" is not in the catalog")
        #expect(store.stored.entry(id: "x") == nil)
    }

    @Test func changesEmitLoaderEntryEventsNamingWhatChanged() async throws {
        let (loader, _) = try await exampleLoader()
        var changes: [EntryChange] = []
        try loader.ctx.on(LoaderEntryEvent.self) { changes.append($0) }
        try await loader.add(Entry(id: "group", children: []))
        try await loader.update(id: "counter", config: ["start": 1])
        try await loader.setDisabled(id: "badge", true)
        try await loader.setDisabled(id: "badge", false)
        try await loader.move(id: "badge", toParent: "group")
        try await loader.update(id: "badge", isolate: ["counter": .shared("blue")])
        try await loader.remove(id: "group")
        #expect(changes == [
            EntryChange(id: "group", kind: .added), EntryChange(id: "counter", kind: .config),
            EntryChange(id: "badge", kind: .disabled), EntryChange(id: "badge", kind: .enabled),
            EntryChange(id: "badge", kind: .moved), EntryChange(id: "badge", kind: .isolate),
            EntryChange(id: "group", kind: .removed), EntryChange(id: "badge", kind: .removed),
        ])
    }

    @Test func injectAndInterceptEditsEmitLoaderEntryEventsLikeConfigChanges() async throws {
        let (loader, _) = try await exampleLoader()
        var changes: [EntryChange] = []
        try loader.ctx.on(LoaderEntryEvent.self) { changes.append($0) }
        try await loader.update(id: "badge", inject: [Dependency(name: "clock", optional: true)])
        try await loader.update(id: "badge", intercept: ["counter": ["step": 2]])
        // The same lists again change nothing, so they say nothing.
        try await loader.update(id: "badge", inject: [Dependency(name: "clock", optional: true)])
        try await loader.update(id: "badge", intercept: ["counter": ["step": 2]])
        var tree = try #require(loader.entry(id: "badge"))
        tree.inject = []
        tree.intercept = [:]
        try await loader.reconcile(loader.entries.map { $0.id == "badge" ? tree : $0 })
        #expect(changes == [
            EntryChange(id: "badge", kind: .inject), EntryChange(id: "badge", kind: .intercept),
            EntryChange(id: "badge", kind: .inject), EntryChange(id: "badge", kind: .intercept),
        ])
        #expect(EntryChange.Kind.allCases.map(\.rawValue) == [
            "added", "removed", "plugin", "moved", "isolate", "inject", "intercept", "config", "enabled", "disabled",
        ])
    }

    @Test func movesIntoItselfOrIntoAPluginEntryAreRejected() async throws {
        let (loader, _) = try await exampleLoader()
        try await loader.add(Entry(id: "outer", children: [Entry(id: "inner", children: [])]))
        let intoSelf = await #expect(throws: LoaderError.self) { try await loader.move(id: "outer", toParent: "inner") }
        #expect(intoSelf?.code == .invalidMove)
        let intoPlugin = await #expect(throws: LoaderError.self) { try await loader.move(id: "badge", toParent: "counter") }
        #expect(intoPlugin?.code == .notAGroup)
        let unknown = await #expect(throws: LoaderError.self) { try await loader.remove(id: "missing") }
        #expect(unknown?.message == "unknown entry \"missing\"")
    }

    @Test func theCatalogListsPluginsWithTheirConfigFields() {
        let catalog = exampleCatalog()
        #expect(catalog.names == ["badge", "counter"])
        #expect(catalog.item(named: "counter")?.schema.fields.map(\.description) == ["start: Int?"])
        #expect(catalog.item(named: "counter")?.provides == ["counter"])
        #expect(catalog.item(named: "badge")?.injects.map(\.name) == ["counter"])
    }

    @Test func reloadRefusesAFileThatDoesNotParseAndKeepsRunning() async throws {
        let folder = try LoaderFolder()
        try folder.write(exampleFile)
        let loader = Loader(ctx: Context(), catalog: exampleCatalog(), store: FileEntryStore(url: folder.entries))
        try await loader.start()
        try folder.write("[ { \"id\": ")
        let error = await #expect(throws: EntryStoreError.self) { try await loader.reload() }
        #expect(error?.line == 1)
        #expect(loader.fiber(for: "counter")?.state == .active)
        #expect(loader.fiber(for: "badge")?.state == .active)
        try folder.write("[ { \"id\": \"counter\", \"plugin\": \"counter\", \"config\": { \"start\": 5 } } ]")
        try await loader.reload()
        #expect(loader.fiber(for: "badge") == nil)
        #expect(LoaderToolbar.shared.badges.isEmpty)
    }

    private func exampleLoader() async throws -> (Loader, InMemoryEntryStore) {
        let store = InMemoryEntryStore(EntryTree(entries: [
            Entry(id: "counter", plugin: "counter", config: ["start": 5]), Entry(id: "badge", plugin: "badge"),
        ]))
        let loader = Loader(ctx: Context(), catalog: exampleCatalog(), store: store)
        try await loader.start()
        return (loader, store)
    }
}

@Suite("Loader: rebuilds") @CordisActor
struct LoaderRebuildTests {
    let spy = LoaderSpy()

    var catalog: PluginCatalog {
        var catalog = PluginCatalog()
        for name in ["foo", "bar"] { catalog.registerCounted(name, spy: spy) }
        catalog.register(FunctionPlugin<LoaderCounterService.Config>(name: "strict") { _, _, _ in }, as: "strict")
        return catalog
    }

    @Test func aChangeOfPluginOrGroupShapeRebuildsTheEntry() async throws {
        let store = InMemoryEntryStore(EntryTree(entries: [Entry(id: "a", plugin: "foo"), Entry(id: "b", plugin: "bar")]))
        let loader = Loader(ctx: Context(), catalog: catalog, store: store)
        try await loader.start()
        let (a, b) = (loader.fiber(for: "a"), loader.fiber(for: "b"))
        try store.save(EntryTree(entries: [Entry(id: "a", plugin: "bar"), Entry(id: "b", children: [])]))
        try await loader.reload()
        #expect(a?.state == .disposed && b?.state == .disposed)
        #expect(loader.fiber(for: "a")?.name == "bar")
        #expect(loader.fiber(for: "b")?.name == "group")
        #expect(spy.calls("bar") == 2 && spy.disposals("foo") == 1 && spy.disposals("bar") == 1)
        #expect(loader.status.map(\.plugin) == ["bar", "group"])
    }

    @Test func anEmptyIsolateIsKeptAndRestartsNothing() async throws {
        let store = InMemoryEntryStore(EntryTree(entries: [Entry(id: "a", plugin: "foo")]))
        let loader = Loader(ctx: Context(), catalog: catalog, store: store)
        try await loader.start()
        let fiber = loader.fiber(for: "a")
        try await loader.reconcile([Entry(id: "a", plugin: "foo", isolate: [:])])
        #expect(loader.fiber(for: "a") === fiber && fiber?.state == .active)
        #expect(spy.calls("foo") == 1 && spy.disposals("foo") == 0)
        #expect(store.stored.entries == [Entry(id: "a", plugin: "foo", isolate: [:])])
        #expect(store.stored.entries[0].json().jsonString() == #"{"id":"a","plugin":"foo","isolate":{}}"#)
    }

    @Test func aGroupThatDisposesItselfIsMarkedDisabledAndItsChildrenStop() async throws {
        let store = InMemoryEntryStore(EntryTree(entries: [
            Entry(id: "g", children: [Entry(id: "a", plugin: "foo"), Entry(id: "b", plugin: "bar")]),
        ]))
        let loader = Loader(ctx: Context(), catalog: catalog, store: store)
        try await loader.start()
        let group = try #require(loader.fiber(for: "g"))
        try await group.dispose()
        await loader.settled()
        #expect(store.stored.entry(id: "g")?.disabled == true)
        #expect(store.stored.entry(id: "a")?.disabled == false && store.stored.entry(id: "b")?.disabled == false)
        #expect(loader.fiber(for: "a") == nil && loader.fiber(for: "b") == nil)
        #expect(spy.disposals("foo") == 1 && spy.disposals("bar") == 1)
    }

    @Test func enablingAGroupValidatesTheConfigsOfItsEntries() async throws {
        let store = InMemoryEntryStore(EntryTree(entries: [
            Entry(id: "g", disabled: true, children: [Entry(id: "s", plugin: "strict", config: ["start": "x"])]),
        ]))
        let loader = Loader(ctx: Context(), catalog: catalog, store: store)
        try await loader.start()
        let error = await #expect(throws: LoaderError.self) { try await loader.setDisabled(id: "g", false) }
        #expect(error?.message == "entry \"s\": invalid config:\n  - expected integer, got string (at start)")
        #expect(store.stored.entry(id: "g")?.disabled == true)
        #expect(store.saveCount == 0)
    }

    @Test func anEntryWithAnUnknownPluginCanStillBeMovedDisabledOrRemoved() async throws {
        let store = InMemoryEntryStore(EntryTree(entries: [
            Entry(id: "g", children: []), Entry(id: "ghost", plugin: "nope"),
        ]))
        let loader = Loader(ctx: Context(), catalog: catalog, store: store)
        try await loader.start()
        try await loader.move(id: "ghost", toParent: "g")
        try await loader.setDisabled(id: "ghost", false)
        #expect(loader.status.last?.error == "plugin \"nope\" is not in the catalog")
        #expect(loader.status.last?.parent == "g")
        try await loader.remove(id: "ghost")
        #expect(store.stored.entry(id: "ghost") == nil)
    }

    @Test func theLoaderCanStartAgainAfterStop() async throws {
        let store = InMemoryEntryStore(EntryTree(entries: [Entry(id: "a", plugin: "foo")]))
        let loader = Loader(ctx: Context(), catalog: catalog, store: store)
        try await loader.start()
        await loader.stop()
        #expect(loader.fiber(for: "a") == nil)
        try await loader.start()
        #expect(loader.fiber(for: "a")?.state == .active)
        #expect(spy.calls("foo") == 2 && spy.disposals("foo") == 1)
    }
}
