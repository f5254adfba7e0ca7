import CordisJSON
import Testing
@testable import Cordis

/// A store that implements neither pair of `EntryStore`'s requirements.
private struct EmptyStore: EntryStore {}

private struct Count: Codable, Sendable, Equatable {
    var start: Int
}

/// cordis-ios's forms that the compatibility program does not reach with an assertion of their own.
@Suite("cordis-ios's API forms") @CordisActor
struct CordisIOSAPITests {
    @Test func aStoreImplementingNeitherPairThrowsInsteadOfRecursing() throws {
        let store = EmptyStore()
        let tree = #expect(throws: EntryStoreError.self) { _ = try store.load() as EntryTree }
        #expect(tree?.code == .incomplete)
        let list = #expect(throws: EntryStoreError.self) { _ = try store.load() as [Entry] }
        #expect(list?.message.contains("implements neither") == true)
        #expect(throws: EntryStoreError.self) { try store.save([Entry(id: "a", plugin: "x")]) }
    }

    @Test func aFunctionPluginsValidateAlsoChecksFiberUpdates() async throws {
        let (root, _) = try makeRoot()
        let plugin = FunctionPlugin<Count>(name: "count", validate: { if $0.start < 0 { throw CordisError(.invalidConfig, "negative") } }) { _, _, _ in }
        let fiber = try root.plugin(plugin, config: Count(start: 1))
        try await fiber.await()
        let refused = await #expect(throws: CordisError.self) { try await fiber.update(Count(start: -1)) }
        #expect(refused?.code == .invalidConfig)
        #expect((fiber.config as? Count) == Count(start: 1))
        try await fiber.update(["start": 2] as JSONValue)
        #expect((fiber.config as? Count) == Count(start: 2))
    }

    @Test func updateWithNoSaveLeavesTheEntrysSavedConfigAsItWas() async throws {
        var catalog = PluginCatalog()
        catalog.register(FunctionPlugin<Count>(name: "count") { _, _, _ in }, as: "count")
        let store = InMemoryEntryStore([Entry(id: "c", plugin: "count", config: ["start": 1])])
        let loader = Loader(ctx: Context(logLevel: .error), catalog: catalog, store: store)
        try await loader.start()
        let fiber = try #require(loader.fiber(for: "c"))
        try await fiber.update(Count(start: 5), noSave: true)
        await loader.settled()
        #expect(store.entries.first?.config == ["start": 1])
        try await fiber.update(Count(start: 7))
        await loader.settled()
        #expect(store.entries.first?.config == ["start": 7])
    }

    /// cordis-ios's own tests write their store as a `@CordisActor` class over `[Entry]`; its
    /// requirements are `@CordisActor` there, so that compiles and the Loader uses it.
    @Test func aCordisActorClassOverEntriesIsAStore() async throws {
        var catalog = PluginCatalog()
        catalog.register(FunctionPlugin<Count>(name: "count") { _, _, _ in }, as: "count")
        let store = ActorBoundStore([Entry(id: "c", plugin: "count", config: ["start": 1])])
        let loader = Loader(ctx: Context(logLevel: .error), catalog: catalog, store: store)
        try await loader.start()
        #expect(loader.fiber(for: "c")?.state == .active)
        try await loader.setDisabled(id: "c", true)
        #expect(store.entries.map(\.disabled) == [true])
        #expect(store.saveCount == 1)
    }

    @Test func derivedContextsKnowTheirParentAndRoot() async throws {
        let root = Context(logLevel: .error)
        let isolated = root.isolate("clock").intercept(name: "clock", ["a": 1])
        #expect(isolated.parent?.parent === root && isolated.root === root && root.root === root)
        var seen: [Bool] = []
        try await root.isolate("x").plugin(FunctionPlugin<NoConfig>(name: "child") { _, _, scope in
            seen = [scope.ctx.parent?.parent === root, scope.ctx.root === root, scope.ctx.isRoot]
        }).await()
        #expect(seen == [true, true, false])
    }
}

/// A store written as cordis-ios's tests write theirs: a `@CordisActor` class over `[Entry]`.
@CordisActor
private final class ActorBoundStore: EntryStore {
    private(set) var entries: [Entry]
    private(set) var saveCount = 0

    init(_ entries: [Entry]) { self.entries = entries }

    func load() throws -> [Entry] { entries }

    func save(_ entries: [Entry]) throws {
        self.entries = entries
        saveCount += 1
    }
}
