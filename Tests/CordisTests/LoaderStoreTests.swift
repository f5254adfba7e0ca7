import CordisJSON
import Foundation
import Testing

@testable import Cordis

/// A fresh temporary folder for one test, removed at the end.
private final class TemporaryFolder {
    let url: URL
    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("cordis-store-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }
    deinit { try? FileManager.default.removeItem(at: url) }
    func file(_ name: String) -> URL { url.appendingPathComponent(name) }
    func write(_ text: String, to name: String) throws {
        try Data(text.utf8).write(to: file(name))
    }
    func read(_ name: String) throws -> String {
        try String(contentsOf: file(name), encoding: .utf8)
    }
    func names() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: url.path).sorted()
    }
}

private struct PlantedCrash: Error {}

private let contractExample = """
    { "version": 1,
      "entries": [
        { "id": "clock", "plugin": "clock" },
        { "id": "blue", "isolate": { "clock": "blue" }, "children": [
            { "id": "clock-blue", "plugin": "clock", "disabled": true, "config": {} } ] } ] }
    """

@Suite("Entry")
struct EntryTests {
    func entryError(_ text: String) -> EntryError? {
        do {
            _ = try Entry(json: JSONValue(parsing: text))
        } catch let error as EntryError {
            return error
        } catch {}
        return nil
    }

    /// `Codable` (cordis-ios's form) reads and writes an entry as the entries file does.
    @Test func codableRoundTripsAnEntryAsTheFileWritesIt() throws {
        let text = #"{"id":"a","plugin":"p","disabled":true,"isolate":{"x":true,"y":"blue"},"config":{"n":1}}"#
        let entry = try JSONDecoder().decode(Entry.self, from: Data(text.utf8))
        #expect(entry == (try Entry(json: JSONValue(parsing: text))))
        #expect(entry.isolate == ["x": .local, "y": .shared("blue")])
        let again = try JSONDecoder().decode(Entry.self, from: JSONEncoder().encode(entry))
        #expect(again == entry)
        #expect(throws: (any Error).self) {
            try JSONDecoder().decode(IsolateSpec.self, from: Data("\"\"".utf8))
        }
        #expect(try JSONDecoder().decode([IsolateSpec].self, from: Data(#"[true,"b"]"#.utf8)) == [.local, .shared("b")])
    }

    @Test func readsEveryField() throws {
        let entry = try Entry(json: JSONValue(parsing: """
            {"id": "g", "note": 1, "plugin": "group", "disabled": true,
             "isolate": {"zeta": true, "alpha": "blue"}, "children": [{"id": "c", "plugin": "clock", "config": {"a": 1}}]}
            """))
        #expect(entry.plugin == "group")
        #expect(entry.isGroup)
        #expect(entry.disabled)
        #expect(entry.isolate == ["zeta": .local, "alpha": .shared("blue")])
        #expect(entry.orderedIsolate.map(\.service) == ["zeta", "alpha"])
        #expect(entry.children?.first?.config == ["a": 1])
        #expect(entry.extra == ["note": 1])
    }

    @Test func namesTheEntryAndFieldInErrors() {
        #expect(entryError(#"{"id": "x", "plugin": "p", "disabled": "yes"}"#)?.message == #"entry "x": field "disabled" must be a boolean"#)
        #expect(entryError(#"{"id": "x", "plugin": "p", "isolate": {"s": false}}"#)?.message == #"entry "x": isolate "s" must be true or a non-empty label string"#)
        #expect(entryError(#"{"id": "x"}"#)?.code == .missingField)
        #expect(entryError(#"{"id": "x", "plugin": "p", "children": []}"#)?.code == .invalidField)
        #expect(entryError(#"{"plugin": "p"}"#)?.message == #"entry: field "id" is required"#)
        #expect(entryError(#"{"id": "x", "children": [{"id": "y", "plugin": 3}]}"#)?.message == #"entry "y": field "plugin" must be a non-empty string"#)
        #expect(entryError(#"{"id": "x", "children": [{"plugin": "p"}]}"#)?.message == #"entry "x": children[0]: field "id" is required"#)
    }

    @Test(arguments: ["", "a b", "é", String(repeating: "a", count: 65), "a/b"])
    func rejectsInvalidIDs(id: String) {
        #expect(!Entry.isValidID(id))
        #expect(entryError(JSONValue.object(["id": .string(id), "plugin": "p"]).jsonString())?.code == .invalidID)
    }

    @Test func acceptsValidIDs() {
        #expect(Entry.isValidID("A-z_0.9"))
        #expect(Entry.isValidID(String(repeating: "a", count: 64)))
    }

    @Test func writesFieldsInTheContractOrder() {
        var entry = Entry(
            id: "e", plugin: "clock", disabled: false, isolate: ["b": .shared("x"), "a": .local], config: [:],
            extra: ["zz": 1])
        #expect(entry.json().jsonString() == #"{"id":"e","plugin":"clock","isolate":{"a":true,"b":"x"},"config":{},"zz":1}"#)
        entry.disabled = true
        entry.isolate = nil
        entry.config = nil
        entry.plugin = Entry.groupPlugin
        entry.children = []
        #expect(entry.json().jsonString() == #"{"id":"e","plugin":"group","disabled":true,"children":[],"zz":1}"#)
    }
}

@Suite("EntryTree")
struct EntryTreeTests {
    @Test func readsTheContractExample() throws {
        let tree = try EntryTree(parsing: Array(contractExample.utf8))
        #expect(tree.entries.map(\.id) == ["clock", "blue"])
        #expect(tree.allEntries.map(\.entry.id) == ["clock", "blue", "clock-blue"])
        #expect(tree.allEntries.map(\.parent) == [nil, nil, "blue"])
        #expect(tree.entry(id: "clock-blue")?.disabled == true)
        #expect(tree.entry(id: "blue")?.isolate == ["clock": .shared("blue")])
    }

    @Test func readsABareArrayAsVersionOne() throws {
        let tree = try EntryTree(parsing: Array(#"[{"id": "a", "plugin": "clock"}]"#.utf8))
        #expect(tree.entries.map(\.id) == ["a"])
        #expect(tree.json()["version"] == 1)
    }

    @Test func refusesNewerVersionsClearly() throws {
        #expect(throws: EntryError.self) { try EntryTree(parsing: Array(#"{"version": 2, "entries": []}"#.utf8)) }
        do {
            _ = try EntryTree(parsing: Array(#"{"version": 2, "entries": []}"#.utf8))
        } catch let error as EntryError {
            #expect(error.code == .unsupportedVersion)
            #expect(error.message.contains("version 2"))
        }
        #expect(throws: EntryError.self) { try EntryTree(parsing: Array(#"{"entries": []}"#.utf8)) }
        #expect(throws: EntryError.self) { try EntryTree(parsing: Array(#""text""#.utf8)) }
    }

    @Test func rejectsDuplicateIDsAnywhereInTheTree() throws {
        let text = #"[{"id": "a", "plugin": "p"}, {"id": "g", "children": [{"id": "a", "plugin": "q"}]}]"#
        do {
            _ = try EntryTree(parsing: Array(text.utf8))
            Issue.record("duplicate ids were accepted")
        } catch let error as EntryError {
            #expect(error.code == .duplicateID)
            #expect(error.message == #"entry "a": duplicate id"#)
        }
    }

    @Test func writesStablePrettyTextKeepingUnknownFields() throws {
        let text = """
            {"entries": [{"plugin": "clock", "id": "c", "isolate": {"s": "l", "r": true}, "x-note": "kept"}],
             "version": 1, "comment": "top"}
            """
        let tree = try EntryTree(parsing: Array(text.utf8))
        let expected = """
            {
              "version": 1,
              "entries": [
                {
                  "id": "c",
                  "plugin": "clock",
                  "isolate": {
                    "s": "l",
                    "r": true
                  },
                  "x-note": "kept"
                }
              ],
              "comment": "top"
            }

            """
        #expect(String(decoding: tree.serialized(), as: UTF8.self) == expected)
        #expect(try EntryTree(parsing: tree.serialized()) == tree)
    }
}

@Suite("FileEntryStore")
struct FileEntryStoreTests {
    @Test func loadsAMissingFileAsAnEmptyTree() throws {
        let folder = try TemporaryFolder()
        let tree: EntryTree = try FileEntryStore(url: folder.file("entries.json")).load()
        #expect(tree.entries.isEmpty)
        #expect(try folder.names().isEmpty)
    }

    @Test func savesAndLoadsBack() throws {
        let folder = try TemporaryFolder()
        let store = FileEntryStore(url: folder.file("entries.json"))
        let tree = try EntryTree(parsing: Array(contractExample.utf8))
        try store.save(tree)
        #expect(try store.load() == tree)
        #expect(try folder.read("entries.json").hasPrefix("{\n  \"version\": 1,\n  \"entries\": [\n    {\n      \"id\": \"clock\""))
        #expect(try folder.names() == ["entries.json"])
    }

    @Test func anEmptyIsolateReadsAsPresentAndIsWrittenBack() throws {
        let folder = try TemporaryFolder()
        let store = FileEntryStore(url: folder.file("entries.json"))
        try folder.write(#"[{"id": "a", "plugin": "p", "isolate": {}}, {"id": "b", "plugin": "p"}]"#, to: "entries.json")
        let entries: [Entry] = try store.load()
        #expect(entries.map(\.isolate) == [[:], nil])
        try store.save(entries)
        #expect(try folder.read("entries.json").contains("\"isolate\": {}"))
        #expect(try store.load() == entries)
    }

    @Test func keepsABareArrayFileABareArrayAndAnObjectFileAnObject() throws {
        let folder = try TemporaryFolder()
        let store = FileEntryStore(url: folder.file("entries.json"))
        try folder.write(#"[{"id": "a", "plugin": "p"}]"#, to: "entries.json")
        var tree: EntryTree = try store.load()
        tree.entries[0].disabled = true
        try store.save(tree)
        // What cordis-ios wrote, cordis-ios reads back: a bare array of entries.
        #expect(try folder.read("entries.json") == "[\n  {\n    \"id\": \"a\",\n    \"plugin\": \"p\",\n    \"disabled\": true\n  }\n]\n")
        #expect(try store.load() == tree)

        try folder.write(#"{"version": 1, "entries": [{"id": "a", "plugin": "p"}], "note": "kept"}"#, to: "entries.json")
        try store.save(try store.load() as EntryTree)
        #expect(try folder.read("entries.json").hasPrefix("{\n  \"version\": 1,"))
        #expect(try folder.read("entries.json").contains("\"note\": \"kept\""))
    }

    @Test func namesTheFileLineAndColumnOfAParseErrorAndLeavesItAlone() throws {
        let folder = try TemporaryFolder()
        let broken = "{\n  \"version\": 1,\n  \"entries\": [,]\n}\n"
        try folder.write(broken, to: "entries.json")
        let store = FileEntryStore(url: folder.file("entries.json"))
        do {
            _ = try store.load()
            Issue.record("a broken file loaded")
        } catch let error as EntryStoreError {
            #expect(error.code == .unparsable)
            #expect(error.line == 3)
            #expect(error.column == 15)
            #expect(error.message == "cannot parse \(folder.file("entries.json").path) at line 3, column 15: unexpected character ','; line 3 reads: \"entries\": [,]")
        }
        #expect(try folder.read("entries.json") == broken)
    }

    @Test func reportsInvalidEntriesWithTheFileName() throws {
        let folder = try TemporaryFolder()
        try folder.write(#"[{"id": "a", "plugin": "p", "disabled": 1}]"#, to: "entries.json")
        do {
            _ = try FileEntryStore(url: folder.file("entries.json")).load()
            Issue.record("an invalid file loaded")
        } catch let error as EntryStoreError {
            #expect(error.code == .invalidEntries)
            #expect(error.message.hasSuffix(#"entries.json: entry "a": field "disabled" must be a boolean"#))
        }
    }

    @Test func aFailedSaveThrowsAndLeavesTheOldFile() throws {
        let folder = try TemporaryFolder()
        try folder.write("not a folder", to: "plain")
        let store = FileEntryStore(url: folder.file("plain").appendingPathComponent("entries.json"))
        #expect(throws: EntryStoreError.self) { try store.save(EntryTree()) }
        #expect(try folder.read("plain") == "not a folder")
    }

    @Test func aCrashBeforeTheRenameKeepsTheOldFileAndTheNextLoadIgnoresTheTemporary() throws {
        let folder = try TemporaryFolder()
        let url = folder.file("entries.json")
        let old = EntryTree(entries: [Entry(id: "old", plugin: "clock")])
        try FileEntryStore(url: url).save(old)
        let oldText = try folder.read("entries.json")

        // A "crash": the temporary file is written and synced, then the save stops before the rename.
        let crashing = FileEntryStore(url: url, beforeRename: { temporary in
            #expect(FileManager.default.fileExists(atPath: temporary))
            throw PlantedCrash()
        })
        let new = EntryTree(entries: [Entry(id: "new", plugin: "clock")])
        #expect(throws: EntryStoreError.self) { try crashing.save(new) }
        #expect(try folder.read("entries.json") == oldText)
        #expect(try folder.names() == ["entries.json"])

        // A real crash leaves the temporary file behind: load ignores it, and a save leaves it alone
        // (it cannot tell a crashed process's file from one another process is writing).
        try folder.write("{ half written", to: ".entries.json.tmp.1.2")
        #expect(try FileEntryStore(url: url).load() == old)
        try FileEntryStore(url: url).save(new)
        #expect(try FileEntryStore(url: url).load() == new)
        #expect(try folder.names() == [".entries.json.tmp.1.2", "entries.json"])
    }

    @Test func refusesToSaveATreeWithDuplicateIDs() throws {
        let folder = try TemporaryFolder()
        let store = FileEntryStore(url: folder.file("entries.json"))
        let tree = EntryTree(entries: [Entry(id: "a", plugin: "p"), Entry(id: "g", children: [Entry(id: "a", plugin: "p")])])
        #expect(throws: EntryError.self) { try store.save(tree) }
        #expect(try folder.names().isEmpty)
    }
}

@Suite("InMemoryEntryStore")
struct InMemoryEntryStoreTests {
    @Test func keepsTheLastSavedTreeAndCanFailSaves() throws {
        let store = InMemoryEntryStore()
        let tree = EntryTree(entries: [Entry(id: "a", plugin: "p")])
        try store.save(tree)
        #expect(try store.load() == tree)
        store.failSaves(with: PlantedCrash())
        #expect(throws: PlantedCrash.self) { try store.save(EntryTree()) }
        #expect(store.stored == tree)
        #expect(store.saveCount == 1)
    }
}
