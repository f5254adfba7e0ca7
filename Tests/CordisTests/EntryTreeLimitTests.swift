import CordisJSON
import Foundation
import Testing

@testable import Cordis

/// A JSON value nested `levels` arrays deep.
private func nested(_ levels: Int) -> JSONValue {
    var value: JSONValue = .integer(0)
    for _ in 0..<levels { value = .array([value]) }
    return value
}

@CordisActor
private func plainLoader(_ folder: LoaderFolder) async throws -> Loader {
    var catalog = PluginCatalog()
    catalog.register(FunctionPlugin<NoConfig>(name: "plain") { _, _, _ in }, as: "plain")
    catalog.register(FunctionPlugin<JSONValue>(name: "any") { _, _, _ in }, as: "any")
    if !FileManager.default.fileExists(atPath: folder.entries.path) {
        try FileEntryStore(url: folder.entries).save(EntryTree())
    }
    let loader = Loader(ctx: Context(), catalog: catalog, store: FileEntryStore(url: folder.entries))
    try await loader.start()
    return loader
}

@Suite("Entry tree limits", .serialized, .timeLimit(.minutes(3))) @CordisActor
struct EntryTreeLimitTests {
    @Test func aChainOfGroupsAddedOneByOneStopsAtTheDepthLimitAndTheFileStaysReadable() async throws {
        let folder = try LoaderFolder()
        let loader = try await plainLoader(folder)
        var parent: String?
        var refusal: LoaderError?
        var depth = 0
        // Without a limit, 256 levels of groups are already past the parser's 512 levels of JSON.
        while depth < 300 {
            let id = "g\(depth + 1)"
            let before = try folder.bytes()
            do {
                try await loader.add(Entry(id: id, children: []), parent: parent)
            } catch let error as LoaderError {
                refusal = error
                #expect(try folder.bytes() == before)
                break
            }
            depth += 1
            parent = id
        }
        let refused = try #require(refusal)
        #expect(refused.code == .limitExceeded)
        #expect(depth == EntryTreeLimits.maxDepth)
        #expect(refused.message.contains("\(EntryTreeLimits.maxDepth)"))
        await loader.stop()

        // The saved file is read back by a new Loader.
        let again = try await plainLoader(folder)
        #expect(again.status.count == depth)
    }

    @Test func aMoveThatWouldNestTooDeepIsRefusedAndTheFileIsUnchanged() async throws {
        let folder = try LoaderFolder()
        let loader = try await plainLoader(folder)
        func chain(_ prefix: String, _ levels: Int) -> Entry {
            var entry = Entry(id: "\(prefix)\(levels)", children: [])
            for level in stride(from: levels - 1, through: 1, by: -1) {
                entry = Entry(id: "\(prefix)\(level)", children: [entry])
            }
            return entry
        }
        let half = EntryTreeLimits.maxDepth / 2 + 1
        try await loader.add(chain("a", half))
        try await loader.add(chain("b", half))
        let before = try folder.bytes()
        let refused = await #expect(throws: LoaderError.self) { try await loader.move(id: "b1", toParent: "a\(half)") }
        #expect(refused?.code == .limitExceeded)
        #expect(try folder.bytes() == before)
        #expect(loader.fiber(for: "b1")?.state == .active)
    }

    @Test func aConfigNestedPastTheParsersLimitIsRefusedAndTheFileIsUnchanged() async throws {
        let folder = try LoaderFolder()
        let loader = try await plainLoader(folder)
        try await loader.add(Entry(id: "x", plugin: "any", config: nested(3)))
        let before = try folder.bytes()
        let update = await #expect(throws: LoaderError.self) { try await loader.update(id: "x", config: nested(520)) }
        #expect(update?.code == .limitExceeded)
        let add = await #expect(throws: LoaderError.self) {
            try await loader.add(Entry(id: "y", plugin: "any", config: nested(520)))
        }
        #expect(add?.code == .limitExceeded)
        #expect(try folder.bytes() == before)
        #expect(loader.fiber(for: "y") == nil)
    }

    @Test func aTreeWithTooManyEntriesIsRefused() async throws {
        let folder = try LoaderFolder()
        let loader = try await plainLoader(folder)
        let children = (0...EntryTreeLimits.maxEntries).map { Entry(id: "e\($0)", plugin: "plain", disabled: true) }
        let before = try folder.bytes()
        let refused = await #expect(throws: LoaderError.self) { try await loader.add(Entry(id: "big", children: children)) }
        #expect(refused?.code == .limitExceeded)
        #expect(try folder.bytes() == before)
    }

    @Test func aTreeWhoseFileWouldBeTooLargeIsRefusedAndTheFileIsUnchanged() async throws {
        let folder = try LoaderFolder()
        let loader = try await plainLoader(folder)
        let before = try folder.bytes()
        let huge = JSONValue.string(String(repeating: "x", count: EntryTreeLimits.maxFileSize))
        let refused = await #expect(throws: LoaderError.self) {
            try await loader.add(Entry(id: "huge", plugin: "any", config: huge))
        }
        #expect(refused?.code == .limitExceeded)
        #expect(try folder.bytes() == before)
    }
}

@Suite("FileEntryStore limits")
struct FileEntryStoreLimitTests {
    @Test func aFileLargerThanTheLimitIsRefusedWithoutBeingParsed() throws {
        let folder = try LoaderFolder()
        var text = Array(#"{"version": 1, "entries": []}"#.utf8)
        text += [UInt8](repeating: 0x20, count: EntryTreeLimits.maxFileSize)
        try Data(text).write(to: folder.entries)
        let error = #expect(throws: EntryStoreError.self) { try FileEntryStore(url: folder.entries).load() }
        #expect(error?.code == .limitExceeded)
        #expect(error?.message.contains("MiB") == true)
    }

    @Test func aTreeDeeperThanTheLimitIsNeitherSavedNorLoaded() throws {
        let folder = try LoaderFolder()
        var entry = Entry(id: "leaf", plugin: "plain")
        for level in 0..<EntryTreeLimits.maxDepth { entry = Entry(id: "g\(level)", children: [entry]) }
        let tree = EntryTree(entries: [entry])
        let error = #expect(throws: (any Error).self) { try FileEntryStore(url: folder.entries).save(tree) }
        #expect((error as? EntryError)?.code == .limitExceeded || (error as? EntryStoreError)?.code == .limitExceeded)
        #expect(!FileManager.default.fileExists(atPath: folder.entries.path))
        try Data(tree.serialized()).write(to: folder.entries)
        let loading = #expect(throws: EntryStoreError.self) { try FileEntryStore(url: folder.entries).load() }
        #expect(loading?.code == .invalidEntries)
        #expect(loading?.message.contains("deeper") == true)
    }
}
