import CordisJSON
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An `EntryStore` in one JSON file, the node's entries file (`CONTRACTS.md` §2).
///
/// A missing file loads as an empty tree; a file that cannot be read or parsed throws an
/// `EntryStoreError` naming it (with line and column for a parse error) and is never touched.
/// `save` is atomic and durable: it writes a temporary file in the same folder, fsyncs it, renames it
/// over the target and fsyncs the folder; when any step fails it throws and the old file is unchanged.
/// Temporary files (`.NAME.tmp-…`) left by a crash are ignored by `load` and removed by the next save.
public struct FileEntryStore: EntryStore, Sendable {
    /// The entries file.
    public let url: URL
    /// Called with the temporary file's path after it is written and synced, before the rename; a
    /// throw aborts the save. Tests use it to stop a save half way.
    let beforeRename: (@Sendable (String) throws -> Void)?
    /// The system calls a save makes (tests replace one to plant a fault).
    let calls: EntryFileCalls

    /// A store for the file at `url`.
    public init(url: URL) {
        self.init(url: url, beforeRename: nil)
    }

    init(url: URL, calls: EntryFileCalls = .system, beforeRename: (@Sendable (String) throws -> Void)? = nil) {
        self.url = url
        self.calls = calls
        self.beforeRename = beforeRename
    }

    private var path: String { url.path }

    private var temporaryPrefix: String { "." + url.lastPathComponent + ".tmp-" }

    public func load() throws -> EntryTree {
        let bytes: [UInt8]
        do {
            guard let read = try Self.readFile(path) else { return EntryTree() }
            bytes = read
        } catch let error as SystemError {
            throw EntryStoreError(code: .unreadable, path: path, message: "cannot read \(path): \(error.message)")
        } catch is FileTooLarge {
            throw EntryStoreError(
                code: .limitExceeded, path: path,
                message: "cannot read \(path): it is larger than \(EntryTreeLimits.maxFileSize >> 20) MiB, the limit for an entries file")
        }
        let json: JSONValue
        do {
            json = try JSONParser(maxDepth: EntryTreeLimits.maxNesting).parse(bytes)
        } catch let error as JSONParseError {
            throw EntryStoreError(
                code: .unparsable, path: path, line: error.line, column: error.column,
                message: "cannot parse \(path) at line \(error.line), column \(error.column): \(error.reason)",
                underlying: error)
        }
        do {
            return try EntryTree(json: json)
        } catch let error as EntryError {
            throw EntryStoreError(code: .invalidEntries, path: path, message: "invalid \(path): \(error.message)", underlying: error)
        }
    }

    public func save(_ tree: EntryTree) throws {
        try tree.validate()
        let bytes = tree.serialized()
        guard bytes.count <= EntryTreeLimits.maxFileSize else {
            throw EntryStoreError(
                code: .limitExceeded, path: path,
                message: "cannot save \(path): the entries would take \(bytes.count) bytes, more than the limit of \(EntryTreeLimits.maxFileSize >> 20) MiB; the file is unchanged")
        }
        let folder = url.deletingLastPathComponent().path
        removeStaleTemporaryFiles(in: folder)
        let temporary = folder + "/" + temporaryPrefix + "\(getpid())-\(UInt64.random(in: 0...UInt64.max))"
        // The previous file, kept under a second name until the new one is durable, to put it back.
        var previous: String?
        do {
            try Self.writeSynced(bytes, to: temporary, modeLike: path, calls: calls)
            do {
                previous = try keepPrevious(in: folder)
                try beforeRename?(temporary)
                guard calls.rename(temporary, path) == 0 else { throw SystemError("rename to \(path)") }
            } catch {
                unlink(temporary)
                if let previous { unlink(previous) }
                throw error
            }
        } catch let error as SystemError {
            throw EntryStoreError(code: .saveFailed, path: path, message: "cannot save \(path): \(error.message); the file is unchanged")
        } catch {
            throw EntryStoreError(code: .saveFailed, path: path, message: "cannot save \(path): \(error); the file is unchanged")
        }
        do {
            try Self.syncFolder(folder, calls: calls)
        } catch let error as SystemError {
            // The rename may not survive a power loss, and the change will be reported as rejected:
            // put the previous file back so the file matches what the caller is told.
            throw putBack(previous, folder: folder, after: error)
        }
        if let previous { unlink(previous) }
    }

    /// Links the current file (if any) under a temporary name; nil when there is no file.
    private func keepPrevious(in folder: String) throws -> String? {
        var status = stat()
        guard lstat(path, &status) == 0 else {
            if errno == ENOENT { return nil }
            throw SystemError("inspect \(path)")
        }
        let kept = folder + "/" + temporaryPrefix + "\(getpid())-\(UInt64.random(in: 0...UInt64.max))"
        guard calls.link(path, kept) == 0 else { throw SystemError("link \(path) to \(kept)") }
        return kept
    }

    /// Undoes a rename whose folder sync failed: the previous file goes back over the target (or the
    /// new file is removed when there was none). Returns the error to throw.
    private func putBack(_ previous: String?, folder: String, after failure: SystemError) -> EntryStoreError {
        let restored: Bool
        if let previous {
            restored = calls.rename(previous, path) == 0
            if !restored { unlink(previous) }
        } else {
            restored = unlink(path) == 0 || errno == ENOENT
        }
        _ = try? Self.syncFolder(folder, calls: calls)
        guard restored else {
            return EntryStoreError(
                code: .saveFailed, path: path,
                message: "cannot save \(path): could not sync its folder (\(failure.message)) nor put the previous file back; the file holds the new entries but the change is reported as failed")
        }
        return EntryStoreError(
            code: .saveFailed, path: path,
            message: "cannot save \(path): could not sync its folder (\(failure.message)); the file is unchanged")
    }

    private func removeStaleTemporaryFiles(in folder: String) {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder) else { return }
        for name in names where name.hasPrefix(temporaryPrefix) { unlink(folder + "/" + name) }
    }

    // MARK: System calls

    /// A failed system call, with errno's text.
    struct SystemError: Error {
        let message: String
        init(_ operation: String) {
            let code = errno
            message = "\(operation): \(String(cString: strerror(code)))"
        }
    }

    /// A file over `EntryTreeLimits.maxFileSize`.
    struct FileTooLarge: Error {}

    /// The file's bytes, or nil when it does not exist.
    static func readFile(_ path: String) throws -> [UInt8]? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            if errno == ENOENT { return nil }
            throw SystemError("open")
        }
        defer { close(descriptor) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            guard bytes.count <= EntryTreeLimits.maxFileSize else { throw FileTooLarge() }
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw SystemError("read")
            }
            if count == 0 { return bytes }
            bytes.append(contentsOf: chunk[0..<count])
        }
    }

    /// Writes `bytes` to a new file at `path` and fsyncs it; its mode copies `modeLike`'s when that exists.
    static func writeSynced(_ bytes: [UInt8], to path: String, modeLike original: String, calls: EntryFileCalls) throws {
        var mode: mode_t = 0o644
        var status = stat()
        if stat(original, &status) == 0 { mode = status.st_mode & 0o7777 }
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode)
        guard descriptor >= 0 else { throw SystemError("create \(path)") }
        var closed = false
        defer { if !closed { close(descriptor) } }
        do {
            try bytes.withUnsafeBytes { buffer in
                var offset = 0
                while offset < buffer.count {
                    let written = calls.write(descriptor, buffer.baseAddress.map { $0 + offset }, buffer.count - offset)
                    if written < 0 {
                        if errno == EINTR { continue }
                        throw SystemError("write \(path)")
                    }
                    offset += written
                }
            }
            guard fchmod(descriptor, mode) == 0 else { throw SystemError("chmod \(path)") }
            guard calls.syncFile(descriptor) == 0 else { throw SystemError("fsync \(path)") }
            closed = true
            guard close(descriptor) == 0 else { throw SystemError("close \(path)") }
        } catch {
            unlink(path)
            throw error
        }
    }

    /// Fsyncs a folder so a rename in it is durable.
    static func syncFolder(_ folder: String, calls: EntryFileCalls) throws {
        let descriptor = open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { throw SystemError("open \(folder)") }
        defer { close(descriptor) }
        guard calls.syncFolder(descriptor) == 0 || errno == EINVAL else { throw SystemError("fsync \(folder)") }
    }
}
