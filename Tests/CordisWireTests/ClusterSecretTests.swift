import Foundation
import Testing
@testable import CordisWire
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Runs a blocking `body` on a thread of its own and returns its result, or nil when it has not
/// returned after `seconds`; `unblock` then runs, to release the blocked call. The caller awaits without
/// holding a thread of the concurrency pool (which other tests share).
private func blockingCall<T: Sendable>(
    seconds: Double = 10, unblock: @escaping @Sendable () -> Void, _ body: @escaping @Sendable () -> T
) async -> T? {
    let waiting = Mutex<CheckedContinuation<T?, Never>?>(nil)
    return await withCheckedContinuation { continuation in
        waiting.withLock { $0 = continuation }
        Thread {
            let value = body()
            waiting.withLock { $0.take() }?.resume(returning: value)
        }.start()
        DispatchQueue.global().asyncAfter(deadline: .now() + seconds) {
            guard let late = waiting.withLock({ $0.take() }) else { return }
            unblock()
            late.resume(returning: nil)
        }
    }
}

private func loadError(_ path: String) -> WireError? {
    do {
        _ = try ClusterSecret.load(contentsOf: path)
        return nil
    } catch {
        return error
    }
}

@Suite("ClusterSecret")
struct ClusterSecretTests {
    /// A fresh folder for one test's files, removed when the closure returns.
    func withFolder(_ body: (URL) throws -> Void) throws {
        let folder = try makeFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        try body(folder)
    }

    func withFolder(_ body: (URL) async throws -> Void) async throws {
        let folder = try makeFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        try await body(folder)
    }

    private func makeFolder() throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("wire-secret-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return folder
    }

    func write(_ text: String, to url: URL, mode: Int) throws {
        try Data(text.utf8).write(to: url)
        try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: url.path)
    }

    @Test("a private file of at least 32 bytes loads, with surrounding whitespace trimmed")
    func loadsTrimmed() throws {
        try withFolder { folder in
            let file = folder.appendingPathComponent("secret")
            try write("  \n\(secretOne)\n\n", to: file, mode: 0o600)
            let loaded = try ClusterSecret.load(contentsOf: file.path)
            #expect(loaded.bytes == Array(secretOne.utf8))
            #expect(!String(describing: loaded).contains("0123"))
        }
    }

    @Test("a file shorter than 32 bytes after trimming is refused")
    func tooShort() throws {
        try withFolder { folder in
            let file = folder.appendingPathComponent("secret")
            try write("   " + String(repeating: "k", count: 31) + "  \n", to: file, mode: 0o600)
            let error = #expect(throws: WireError.self) { try ClusterSecret.load(contentsOf: file.path) }
            #expect(error?.code == .secretTooShort)
            #expect(error?.message.contains("31 bytes") == true)
        }
    }

    @Test("a file readable or writable by group or others is refused",
          arguments: [0o640, 0o604, 0o644, 0o660, 0o620, 0o602, 0o622, 0o610, 0o601])
    func tooOpen(mode: Int) throws {
        try withFolder { folder in
            let file = folder.appendingPathComponent("secret")
            try write(secretOne, to: file, mode: mode)
            let error = #expect(throws: WireError.self) { try ClusterSecret.load(contentsOf: file.path) }
            #expect(error?.code == .secretTooOpen)
            #expect(error?.message.contains("chmod 600") == true)
        }
    }

    @Test("a missing file or a folder is unreadable")
    func unreadable() throws {
        try withFolder { folder in
            let missing = #expect(throws: WireError.self) {
                try ClusterSecret.load(contentsOf: folder.appendingPathComponent("nope").path)
            }
            #expect(missing?.code == .secretUnreadable)
            try FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: folder.path)
            #expect((#expect(throws: WireError.self) { try ClusterSecret.load(contentsOf: folder.path) })?.code == .secretUnreadable)
        }
    }

    @Test("a FIFO, or a symlink to one, is refused at once instead of blocking start-up")
    func fifo() async throws {
        try await withFolder { folder in
            let fifo = folder.appendingPathComponent("fifo").path
            #expect(mkfifo(fifo, 0o600) == 0)
            let link = folder.appendingPathComponent("link").path
            try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: fifo)
            let release: @Sendable () -> Void = {
                let descriptor = open(fifo, O_WRONLY | O_NONBLOCK)
                if descriptor >= 0 { close(descriptor) }
            }
            for path in [fifo, link] {
                let outcome = await blockingCall(unblock: release) { loadError(path) }
                let error = try #require(outcome, "loading \(path) blocked")
                #expect(error?.code == .secretUnreadable)
                #expect(error?.message.contains("FIFO") == true)
            }
        }
    }

    @Test("a device is refused as not a regular file")
    func device() throws {
        let error = loadError("/dev/zero")
        #expect(error?.code == .secretUnreadable)
        #expect(error?.message.contains("not a regular file") == true)
    }

    @Test("a file larger than a few KiB is refused without being read whole")
    func tooLarge() throws {
        try withFolder { folder in
            let file = folder.appendingPathComponent("secret")
            try write(String(repeating: "k", count: 8 * 1024), to: file, mode: 0o600)
            let error = loadError(file.path)
            #expect(error?.code == .secretUnreadable)
            #expect(error?.message.contains("KiB") == true)
        }
    }

    @Test("a symlink to a private secret file loads")
    func symlink() throws {
        try withFolder { folder in
            let file = folder.appendingPathComponent("secret")
            try write(secretOne, to: file, mode: 0o600)
            let link = folder.appendingPathComponent("link")
            try FileManager.default.createSymbolicLink(atPath: link.path, withDestinationPath: file.path)
            #expect(try ClusterSecret.load(contentsOf: link.path).bytes == Array(secretOne.utf8))
        }
    }

    @Test("two files make a rotation: the first proves, both are accepted; three are refused")
    func rotationFiles() throws {
        try withFolder { folder in
            let first = folder.appendingPathComponent("new")
            let second = folder.appendingPathComponent("old")
            try write(secretTwo, to: first, mode: 0o400)
            try write(secretOne, to: second, mode: 0o600)
            let secrets = try ClusterSecrets.load(files: [first.path, second.path])
            #expect(secrets.proving.bytes == Array(secretTwo.utf8))
            #expect(secrets.accepted.map(\.bytes) == [Array(secretTwo.utf8), Array(secretOne.utf8)])
            #expect(throws: WireError.self) { try ClusterSecrets.load(files: [first.path, second.path, first.path]) }
            #expect(throws: WireError.self) { try ClusterSecrets.load(files: []) }
        }
    }
}
