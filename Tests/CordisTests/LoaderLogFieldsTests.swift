import Testing
@testable import Cordis

@Suite("Loader log fields", .timeLimit(.minutes(1))) @CordisActor
struct LoaderLogFieldsTests {
    @Test func recordsLoggedByAnEntrysPluginAndItsChildrenNameTheEntry() async throws {
        let (root, logs) = try makeRoot()
        var catalog = PluginCatalog()
        catalog.register(FunctionPlugin<NoConfig>(name: "talker") { _, _, scope in
            scope.ctx.logger.info("from the entry")
            try scope.ctx.plugin(FunctionPlugin<NoConfig>(name: "child") { _, _, child in child.ctx.logger("child").info("from a child") })
        }, as: "talker")
        let loader = Loader(
            ctx: root, catalog: catalog, store: InMemoryEntryStore(EntryTree(entries: [Entry(id: "speaker", plugin: "talker")])))
        try await loader.start()
        let records = logs.all.filter { $0.text.hasPrefix("from ") }
        #expect(records.count == 2)
        for record in records {
            #expect(record.fields.contains { $0.key == "CORDIS_ENTRY" && $0.value == "speaker" })
        }
        root.logger.info("from the root")
        let rootRecord = try #require(logs.all.last)
        #expect(!rootRecord.fields.contains { $0.key == "CORDIS_ENTRY" })
        await loader.stop()
    }
}

@Suite("Loader config of a disabled entry", .timeLimit(.minutes(1))) @CordisActor
struct LoaderDisabledConfigTests {
    struct Settings: Decodable {
        var start: Int
    }

    @Test func anInvalidConfigForADisabledEntryIsRejectedAndNotSaved() async throws {
        let (root, _) = try makeRoot()
        var catalog = PluginCatalog()
        catalog.register(FunctionPlugin<Settings>(name: "counter") { _, _, _ in }, as: "counter")
        let store = InMemoryEntryStore(EntryTree(entries: [
            Entry(id: "off", plugin: "counter", disabled: true, config: ["start": 1]),
        ]))
        let loader = Loader(ctx: root, catalog: catalog, store: store)
        try await loader.start()
        let before = store.stored
        await #expect(throws: LoaderError.self) {
            try await loader.update(id: "off", config: ["start": "x"])
        }
        #expect(store.stored == before)
        try await loader.update(id: "off", config: ["start": 2])
        #expect(loader.entry(id: "off")?.config == ["start": 2])
        await loader.stop()
    }
}
