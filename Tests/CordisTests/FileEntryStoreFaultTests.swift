import CordisJSON
import Foundation
import Synchronization
import Testing

@testable import Cordis

#if canImport(Glibc)
import Glibc
#endif

/// The system calls with the folder sync failing (EIO) the first `failures` times.
private func failingFolderSync(times failures: Int = Int.max) -> EntryFileCalls {
    let remaining = Mutex(failures)
    var calls = EntryFileCalls.system
    calls.syncFolder = { descriptor in
        let fail = remaining.withLock { count in
            guard count > 0 else { return false }
            count -= 1
            return true
        }
        guard fail else { return fsync(descriptor) }
        errno = EIO
        return -1
    }
    return calls
}

private func names(in folder: LoaderFolder) throws -> [String] {
    try FileManager.default.contentsOfDirectory(atPath: folder.url.path).sorted()
}

@Suite("FileEntryStore: a save that fails at a system call")
struct FileEntryStoreFaultTests {
    @Test func aFailedFolderSyncAfterTheRenamePutsThePreviousFileBack() throws {
        let folder = try LoaderFolder()
        let old = EntryTree(entries: [Entry(id: "old", plugin: "clock")])
        try FileEntryStore(url: folder.entries).save(old)
        let oldBytes = try folder.bytes()

        let store = FileEntryStore(url: folder.entries, calls: failingFolderSync(times: 1))
        let error = #expect(throws: EntryStoreError.self) {
            try store.save(EntryTree(entries: [Entry(id: "new", plugin: "clock")]))
        }
        #expect(error?.code == .saveFailed)
        #expect(error?.message.contains("unchanged") == true)
        #expect(try folder.bytes() == oldBytes)
        #expect(try FileEntryStore(url: folder.entries).load() == old)
        #expect(try names(in: folder) == ["entries.json"])
    }

    @Test func aFailedFolderSyncOfTheFirstSaveLeavesNoFile() throws {
        let folder = try LoaderFolder()
        let store = FileEntryStore(url: folder.entries, calls: failingFolderSync())
        let error = #expect(throws: EntryStoreError.self) {
            try store.save(EntryTree(entries: [Entry(id: "new", plugin: "clock")]))
        }
        #expect(error?.code == .saveFailed)
        #expect(try names(in: folder).isEmpty)
    }

    @Test func aFailedWriteOrFileSyncLeavesTheOldFileAndNoTemporary() throws {
        let folder = try LoaderFolder()
        try FileEntryStore(url: folder.entries).save(EntryTree(entries: [Entry(id: "old", plugin: "clock")]))
        let oldBytes = try folder.bytes()
        var failingWrite = EntryFileCalls.system
        failingWrite.write = { _, _, _ in
            errno = ENOSPC
            return -1
        }
        var failingSync = EntryFileCalls.system
        failingSync.syncFile = { _ in
            errno = EIO
            return -1
        }
        for calls in [failingWrite, failingSync] {
            let store = FileEntryStore(url: folder.entries, calls: calls)
            #expect(throws: EntryStoreError.self) { try store.save(EntryTree(entries: [Entry(id: "new", plugin: "clock")])) }
            #expect(try folder.bytes() == oldBytes)
            #expect(try names(in: folder) == ["entries.json"])
        }
    }
}

@Suite("Loader: a change whose folder sync fails", .timeLimit(.minutes(1))) @CordisActor
struct LoaderFolderSyncFaultTests {
    @Test func theChangeIsRejectedAndNeitherTheFileNorTheFibersChange() async throws {
        let folder = try LoaderFolder()
        var catalog = PluginCatalog()
        catalog.register(FunctionPlugin<NoConfig>(name: "plain") { _, _, _ in }, as: "plain")
        try FileEntryStore(url: folder.entries).save(EntryTree(entries: [Entry(id: "a", plugin: "plain")]))
        let oldBytes = try folder.bytes()
        let loader = Loader(
            ctx: Context(), catalog: catalog, store: FileEntryStore(url: folder.entries, calls: failingFolderSync()))
        try await loader.start()
        let running = try #require(loader.fiber(for: "a"))

        let refused = await #expect(throws: LoaderError.self) { try await loader.add(Entry(id: "b", plugin: "plain")) }
        #expect(refused?.code == .saveFailed)
        let disabling = await #expect(throws: LoaderError.self) { try await loader.setDisabled(id: "a", true) }
        #expect(disabling?.code == .saveFailed)
        #expect(try folder.bytes() == oldBytes)
        #expect(loader.fiber(for: "b") == nil)
        #expect(loader.fiber(for: "a") === running)
        #expect(running.state == .active)
    }
}
