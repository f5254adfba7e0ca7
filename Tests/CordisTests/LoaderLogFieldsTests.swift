import Testing
@testable import Cordis

@Suite("Loader log fields", .timeLimit(.minutes(1))) @CordisActor
struct LoaderLogFieldsTests {
    @Test func recordsLoggedByAnEntrysPluginAndItsChildrenNameTheEntry() async throws {
        let (root, logs) = try makeRoot()
        var catalog = PluginCatalog()
        catalog.register(name: "talker") { scope in
            scope.ctx.logger.info("from the entry")
            try scope.ctx.plugin(name: "child") { child in child.ctx.logger("child").info("from a child") }
        }
        let loader = Loader(
            ctx: root, catalog: catalog, store: InMemoryEntryStore(EntryTree(entries: [Entry(id: "speaker", plugin: "talker")])))
        try await loader.start()
        let records = logs.all.filter { $0.message.hasPrefix("from ") }
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
