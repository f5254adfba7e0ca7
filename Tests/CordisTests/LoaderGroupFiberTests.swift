import CordisJSON
import Testing

@testable import Cordis

/// A group's children run under the group's fiber, as cordis-ios's group plugin starts them: the group's
/// fiber is their `parent`, stopping it stops them, and an entry moved to another group keeps running
/// under the new one.
@Suite("Loader: a group's children run under its fiber") @CordisActor
struct LoaderGroupFiberTests {
    let spy = LoaderSpy()

    var catalog: PluginCatalog {
        var catalog = PluginCatalog()
        catalog.registerCounted("foo", spy: spy)
        return catalog
    }

    @Test func aChildIsStartedFromItsGroupsFiberAndStopsWithIt() async throws {
        let store = InMemoryEntryStore(EntryTree(entries: [
            Entry(id: "g", children: [Entry(id: "c", plugin: "foo", intercept: ["x": .integer(1)])]),
        ]))
        let loader = Loader(ctx: Context(), catalog: catalog, store: store)
        try await loader.start()
        let group = try #require(loader.fiber(for: "g"))
        let child = try #require(loader.fiber(for: "c"))
        #expect(child.parent.fiber === group)
        #expect(child.parent.fiber === group)
        #expect(child.ctx.intercepts["x"] as? JSONValue == .integer(1))

        // The group's own fiber is not rebuilt when the group's intercepts change, so its child is not
        // stopped behind the Loader's back.
        try await loader.replace(with: EntryTree(entries: [
            Entry(id: "g", children: [Entry(id: "c", plugin: "foo", intercept: ["x": .integer(1)])],
                  intercept: ["y": .integer(2)]),
        ]))
        #expect(loader.fiber(for: "g") === group)
        #expect(loader.fiber(for: "c")?.ctx.intercepts["y"] as? JSONValue == .integer(2))

        try await group.dispose()
        #expect(loader.fiber(for: "c") == nil)
        #expect(child.state == .disposed)
    }

    @Test func anEntryMovedToAnotherGroupKeepsRunningUnderTheNewGroup() async throws {
        let store = InMemoryEntryStore(EntryTree(entries: [
            Entry(id: "a", children: [Entry(id: "c", plugin: "foo")]),
            Entry(id: "b", children: []),
        ]))
        let loader = Loader(ctx: Context(), catalog: catalog, store: store)
        try await loader.start()
        let child = try #require(loader.fiber(for: "c"))
        let groupB = try #require(loader.fiber(for: "b"))
        spy.reset()

        try await loader.move(id: "c", toParent: "b")
        #expect(loader.fiber(for: "c") === child)
        #expect(child.parent.fiber === groupB)
        #expect(spy.calls("foo") == 0 && spy.disposals("foo") == 0)

        // The old group no longer holds it; the new one does.
        try await loader.setDisabled(id: "a", true)
        #expect(child.state == .active)
        try await loader.remove(id: "a")
        try await loader.move(id: "c", toParent: nil)
        #expect(child.parent.fiber === loader.ctx.fiber)
        try await loader.setDisabled(id: "b", true)
        #expect(child.state == .active)
        #expect(spy.calls("foo") == 0 && spy.disposals("foo") == 0)
    }
}
