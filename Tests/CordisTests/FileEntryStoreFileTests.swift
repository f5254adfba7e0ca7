import CordisJSON
import Foundation
import Testing

@testable import Cordis

#if canImport(Glibc)
import Glibc
#endif

/// Runs a blocking `body` on a thread of its own and returns its result, or nil when it has not
/// returned after `seconds`; `unblock` then runs, to release the blocked call so no thread stays stuck.
/// The caller awaits without holding a thread of the concurrency pool (which other tests share).
func blockingCall<T: Sendable>(
    seconds: Double = 10, unblock: @escaping @Sendable () -> Void = {}, _ body: @escaping @Sendable () -> T
) async -> T? {
    let waiting = LockedBox<CheckedContinuation<T?, Never>>()
    return await withCheckedContinuation { continuation in
        waiting.set(continuation)
        Thread {
            let value = body()
            waiting.take()?.resume(returning: value)
        }.start()
        DispatchQueue.global().asyncAfter(deadline: .now() + seconds) {
            guard let late = waiting.take() else { return }
            unblock()
            late.resume(returning: nil)
        }
    }
}

/// One value set from another thread.
final class LockedBox<T>: @unchecked Sendable {
    // `stored` is read and written only while holding `lock`.
    private let lock = NSLock()
    private var stored: T?
    func set(_ value: T) { lock.withLock { stored = value } }
    var value: T? { lock.withLock { stored } }
    /// The value, leaving none (so only one caller gets it).
    func take() -> T? { lock.withLock { defer { stored = nil }; return stored } }
}

/// Opens the FIFO at `path` for writing without blocking and closes it: a reader blocked in `open`
/// then sees end of file.
func releaseFIFOReader(_ path: String) {
    let descriptor = open(path, O_WRONLY | O_NONBLOCK)
    if descriptor >= 0 { close(descriptor) }
}

private func loadError(_ url: URL) -> EntryStoreError? {
    do {
        _ = try FileEntryStore(url: url).load()
        return nil
    } catch let error as EntryStoreError {
        return error
    } catch {
        Issue.record("unexpected error \(error)")
        return nil
    }
}

private func names(in folder: LoaderFolder) throws -> [String] {
    try FileManager.default.contentsOfDirectory(atPath: folder.url.path).sorted()
}

@Suite("FileEntryStore: what it reads and writes", .timeLimit(.minutes(1)))
struct FileEntryStoreFileTests {
    @Test func aFIFOIsRefusedAtOnceInsteadOfBlockingStartUp() async throws {
        let folder = try LoaderFolder()
        let path = folder.entries.path
        #expect(mkfifo(path, 0o600) == 0)
        let url = folder.entries
        let error = await blockingCall(unblock: { releaseFIFOReader(path) }) { loadError(url) }
        let refused = try #require(error, "loading a FIFO blocked")
        #expect(refused?.code == .unreadable)
        #expect(refused?.message.contains("FIFO") == true)
    }

    @Test func aSymlinkToAFIFOIsRefusedAtOnce() async throws {
        let folder = try LoaderFolder()
        let fifo = folder.url.appendingPathComponent("fifo").path
        #expect(mkfifo(fifo, 0o600) == 0)
        try FileManager.default.createSymbolicLink(atPath: folder.entries.path, withDestinationPath: fifo)
        let url = folder.entries
        let error = await blockingCall(unblock: { releaseFIFOReader(fifo) }) { loadError(url) }
        let refused = try #require(error, "loading a symlink to a FIFO blocked")
        #expect(refused?.message.contains("FIFO") == true)
    }

    @Test func aDeviceOrAFolderIsRefusedAsNotARegularFile() async throws {
        let zero = await blockingCall { loadError(URL(fileURLWithPath: "/dev/zero")) }
        let device = try #require(zero, "loading /dev/zero did not return")
        #expect(device?.code == .unreadable)
        #expect(device?.message.contains("not a regular file") == true)
        let folder = try LoaderFolder()
        let directory = loadError(folder.url)
        #expect(directory?.code == .unreadable)
        #expect(directory?.message.contains("not a regular file") == true)
    }

    @Test func aSymlinkedEntriesFileStaysASymlinkAndItsTargetIsUpdated() throws {
        let folder = try LoaderFolder()
        let real = folder.url.appendingPathComponent("real")
        try FileManager.default.createDirectory(at: real, withIntermediateDirectories: true)
        let target = real.appendingPathComponent("entries.json")
        try FileEntryStore(url: target).save(EntryTree(entries: [Entry(id: "old", plugin: "clock")]))
        // A relative link, resolved from the link's folder.
        try FileManager.default.createSymbolicLink(atPath: folder.entries.path, withDestinationPath: "real/entries.json")

        let new = EntryTree(entries: [Entry(id: "new", plugin: "clock")])
        try FileEntryStore(url: folder.entries).save(new)
        let link = try FileManager.default.destinationOfSymbolicLink(atPath: folder.entries.path)
        #expect(link == "real/entries.json")
        #expect(try FileEntryStore(url: target).load() == new)
        #expect(try FileEntryStore(url: folder.entries).load() == new)
        #expect(try FileManager.default.contentsOfDirectory(atPath: real.path) == ["entries.json"])
        #expect(try names(in: folder) == ["entries.json", "real"])
    }

    @Test func aDanglingSymlinkIsAnEmptyTreeAndTheFirstSaveCreatesItsTarget() throws {
        let folder = try LoaderFolder()
        let target = folder.url.appendingPathComponent("target.json")
        try FileManager.default.createSymbolicLink(atPath: folder.entries.path, withDestinationPath: target.path)
        #expect(try FileEntryStore(url: folder.entries).load() == EntryTree())
        let tree = EntryTree(entries: [Entry(id: "a", plugin: "clock")])
        try FileEntryStore(url: folder.entries).save(tree)
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: folder.entries.path) == target.path)
        #expect(try FileEntryStore(url: target).load() == tree)
    }

    @Test func aSaveLeavesAnotherProcesssTemporaryFilesAlone() throws {
        let folder = try LoaderFolder()
        let foreign = [".entries.json.tmp-4242-77", ".entries.json.tmp.4242.77"]
        for name in foreign {
            try Data("{ half written".utf8).write(to: folder.url.appendingPathComponent(name))
        }
        let tree = EntryTree(entries: [Entry(id: "a", plugin: "clock")])
        try FileEntryStore(url: folder.entries).save(tree)
        try FileEntryStore(url: folder.entries).save(tree)
        #expect(try names(in: folder) == (["entries.json"] + foreign).sorted())
        #expect(try FileEntryStore(url: folder.entries).load() == tree)
    }

    @Test func aTemporaryFileIsNamedAfterTheFileAndThisProcess() throws {
        let folder = try LoaderFolder()
        let seen = LockedNames()
        let store = FileEntryStore(url: folder.entries, beforeRename: { seen.add($0) })
        try store.save(EntryTree())
        let name = try #require(seen.all.first.map { URL(fileURLWithPath: $0).lastPathComponent })
        #expect(name.hasPrefix(".entries.json.tmp.\(getpid())."))
    }

    @Test func aParseErrorQuotesAShortPrintableExcerptOfTheOffendingLine() throws {
        let folder = try LoaderFolder()
        // DEL is allowed raw in a JSON string and tabs between values: neither may reach the message.
        let line = "[" + String(repeating: "\"\u{7F}[31mxxxxxxxx\",\t", count: 1_000) + "}]"
        try Data(line.utf8).write(to: folder.entries)
        let error = try #require(loadError(folder.entries))
        #expect(error.code == .unparsable)
        #expect(error.message.count < 300)
        #expect(!error.message.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F })
        #expect(error.message.contains("}]"))
    }

    @Test func aParseErrorOnALongDuplicateKeyStaysShort() throws {
        let folder = try LoaderFolder()
        let key = String(repeating: "k", count: 10_000)
        try Data("{\"\(key)\": 1, \"\(key)\": 2}".utf8).write(to: folder.entries)
        let error = try #require(loadError(folder.entries))
        #expect(error.code == .unparsable)
        #expect(error.message.count < 300)
    }

    @Test func aSymlinkedFileThatDoesNotParseIsReportedWithoutItsContents() throws {
        let folder = try LoaderFolder()
        let secret = folder.url.appendingPathComponent("shadow")
        try Data("root:$6$SECRETHASH:19000:0:99999:7:::\n".utf8).write(to: secret)
        try FileManager.default.createSymbolicLink(atPath: folder.entries.path, withDestinationPath: secret.path)
        let error = try #require(loadError(folder.entries))
        #expect(error.code == .unparsable)
        #expect(error.line == 1)
        for fragment in ["root", "SECRET", "'r'", "$6$"] { #expect(!error.message.contains(fragment)) }
    }
}

/// Paths collected from a `@Sendable` hook.
final class LockedNames: @unchecked Sendable {
    // `names` is read and written only while holding `lock`.
    private let lock = NSLock()
    private var names: [String] = []
    func add(_ name: String) { lock.withLock { names.append(name) } }
    var all: [String] { lock.withLock { names } }
}
