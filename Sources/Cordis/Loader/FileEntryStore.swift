import CordisFiles
import CordisJSON
import FoundationEssentials

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An `EntryStore` in one JSON file, the node's entries file.
///
/// A missing file loads as an empty tree. The file must be a regular file or a symlink to one, at most
/// `EntryTreeLimits.maxFileSize` bytes; anything else (a FIFO, a device, a folder) is refused at once,
/// without blocking. A file that cannot be read or parsed throws an `EntryStoreError` naming it (with
/// line, column and a short printable excerpt of the line for a parse error; no excerpt when the path
/// is a symlink, so a link to another file never shows that file's bytes) and is never touched.
///
/// `save` is atomic and durable: it writes a temporary file beside the target, fsyncs it, renames it
/// over the target and fsyncs the folder; when any step fails it throws and the old file is in place
/// (after a failed folder fsync the previous file is put back). A symlink stays a symlink: its target
/// is replaced. Temporary files are named `.NAME.tmp.PID.RANDOM`; a save removes only its own, so
/// other processes' files in a shared folder are left alone, and `load` ignores them all.
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

    @_disfavoredOverload
    nonisolated public func load() throws -> EntryTree {
        let bytes: [UInt8]
        do {
            guard let file = try RegularFile.read(path, maxSize: EntryTreeLimits.maxFileSize) else { return EntryTree() }
            bytes = file.bytes
        } catch {
            switch error.code {
            case .tooLarge:
                throw EntryStoreError(
                    code: .limitExceeded, path: path,
                    message: "cannot read \(path): it is larger than \(RegularFile.size(EntryTreeLimits.maxFileSize)), the limit for an entries file")
            case .notRegular, .unreadable:
                throw EntryStoreError(code: .unreadable, path: path, message: error.message)
            }
        }
        let json: JSONValue
        do {
            json = try JSONParser(maxDepth: EntryTreeLimits.maxNesting).parse(bytes)
        } catch let error as JSONParseError {
            throw parseError(error, in: bytes)
        }
        do {
            return try EntryTree(json: json)
        } catch let error as EntryError {
            throw EntryStoreError(code: .invalidEntries, path: path, message: "invalid \(path): \(error.message)", underlying: error)
        }
    }

    /// The error for a file that does not parse: line and column, and, unless the path is a symlink
    /// (whose target the node was not told to read), the reason and a short excerpt of the line.
    private func parseError(_ error: JSONParseError, in bytes: [UInt8]) -> EntryStoreError {
        var message = "cannot parse \(path) at line \(error.line), column \(error.column): "
        if RegularFile.isSymlink(path) {
            message += "not valid JSON (\(error.code)); the contents of a symlinked file are not quoted"
        } else {
            message += error.reason
            if let excerpt = Self.excerpt(of: bytes, at: error.offset) { message += "; line \(error.line) reads: \(excerpt)" }
        }
        return EntryStoreError(
            code: .unparsable, path: path, line: error.line, column: error.column, message: message, underlying: error)
    }

    /// At most 40 printable characters of the line holding `offset` (20 either side), `...` where the
    /// line goes on, `?` for anything not printable; nil for an empty excerpt.
    static func excerpt(of bytes: [UInt8], at offset: Int) -> String? {
        let offset = min(max(0, offset), bytes.count)
        let side = 20
        // Bytes enough for `side` characters of up to 4 bytes each, within the line.
        var start = offset
        while start > 0, offset - start < side * 4, bytes[start - 1] != 0x0A { start -= 1 }
        var end = offset
        while end < bytes.count, end - offset < side * 4, bytes[end] != 0x0A { end += 1 }
        let before = Array(String(decoding: bytes[start..<offset], as: UTF8.self).unicodeScalars)
        let after = Array(String(decoding: bytes[offset..<end], as: UTF8.self).unicodeScalars)
        let shownBefore = before.suffix(side)
        let shownAfter = after.prefix(side)
        let lineGoesOnBefore = shownBefore.count < before.count || (start > 0 && bytes[start - 1] != 0x0A)
        let lineGoesOnAfter = shownAfter.count < after.count || (end < bytes.count && bytes[end] != 0x0A)
        var text = ""
        for scalar in shownBefore + shownAfter {
            text.unicodeScalars.append(PrintableText.isPrintable(scalar) ? scalar : "?")
        }
        if !lineGoesOnBefore { text = String(text.drop { $0 == " " }) }
        guard !text.isEmpty else { return nil }
        return (lineGoesOnBefore ? "..." : "") + text + (lineGoesOnAfter ? "..." : "")
    }

    /// The file's top-level entries (cordis-ios's `load()`), callable from any thread.
    ///
    /// - Throws: `EntryStoreError` as `load() -> EntryTree` does.
    nonisolated public func load() throws -> [Entry] {
        try (load() as EntryTree).entries
    }

    /// Saves `entries` as the whole tree (cordis-ios's `save(_:)`), callable from any thread; the file
    /// keeps its form as `save(_: EntryTree)` says.
    ///
    /// - Throws: `EntryStoreError` as `save(_: EntryTree)` does; the file is unchanged then.
    nonisolated public func save(_ entries: [Entry]) throws {
        try save(EntryTree(entries: entries))
    }

    /// Writes the object form, except over a file that is a bare array of entries (cordis-ios's form),
    /// which stays one while the tree has no unknown top-level fields to keep: what a user wrote, the
    /// Loader saves in the same form.
    @_disfavoredOverload
    nonisolated public func save(_ tree: EntryTree) throws {
        try tree.validate()
        let bytes = tree.extra.isEmpty && Self.holdsBareList(path) ? tree.serializedList() : tree.serialized()
        guard bytes.count <= EntryTreeLimits.maxFileSize else {
            throw EntryStoreError(
                code: .limitExceeded, path: path,
                message: "cannot save \(path): the entries would take \(bytes.count) bytes, more than the limit of \(RegularFile.size(EntryTreeLimits.maxFileSize)); the file is unchanged")
        }
        // A symlink stays a symlink: the file replaced is the end of its chain of links.
        let target: String
        do {
            target = try RegularFile.writeTarget(of: path)
        } catch {
            throw EntryStoreError(code: .saveFailed, path: path, message: "cannot save \(path): \(error.reason); the file is unchanged")
        }
        let folder = RegularFile.folder(of: target)
        let prefix = "." + RegularFile.name(of: target) + ".tmp.\(getpid())."
        func temporaryName() -> String { folder + "/" + prefix + "\(UInt64.random(in: 0...UInt64.max))" }
        let temporary = temporaryName()
        // The previous file, kept under a second name until the new one is durable, to put it back.
        var previous: String?
        do {
            try Self.checkReplaceable(target)
            try Self.writeSynced(bytes, to: temporary, modeLike: target, calls: calls)
            do {
                previous = try keepPrevious(target, as: temporaryName())
                try beforeRename?(temporary)
                guard calls.rename(temporary, target) == 0 else { throw SystemError("rename to \(target)") }
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
            throw putBack(previous, over: target, folder: folder, after: error)
        }
        if let previous { unlink(previous) }
    }

    /// Refuses to replace anything but a regular file (a folder, FIFO or device at the target).
    /// Whether the file at `path` (through its symlinks) is a bare array of entries: its first byte
    /// after white space is `[`. False when it is missing or unreadable.
    static func holdsBareList(_ path: String) -> Bool {
        guard let file = try? RegularFile.read(path, maxSize: EntryTreeLimits.maxFileSize) else { return false }
        let whitespace: Set<UInt8> = [0x20, 0x09, 0x0A, 0x0D]
        return file.bytes.first { !whitespace.contains($0) } == UInt8(ascii: "[")
    }

    private static func checkReplaceable(_ target: String) throws {
        var status = stat()
        guard lstat(target, &status) == 0 else {
            if errno == ENOENT { return }
            throw SystemError("inspect \(target)")
        }
        guard status.st_mode & S_IFMT == S_IFREG else {
            throw SystemError(message: "\(target) is not a regular file")
        }
    }

    /// Links the current file (if any) under `name`; nil when there is no file.
    private func keepPrevious(_ target: String, as name: String) throws -> String? {
        var status = stat()
        guard lstat(target, &status) == 0 else {
            if errno == ENOENT { return nil }
            throw SystemError("inspect \(target)")
        }
        guard calls.link(target, name) == 0 else { throw SystemError("link \(target) to \(name)") }
        return name
    }

    /// Undoes a rename whose folder sync failed: the previous file goes back over the target (or the
    /// new file is removed when there was none). Returns the error to throw.
    private func putBack(_ previous: String?, over target: String, folder: String, after failure: SystemError) -> EntryStoreError {
        let restored: Bool
        if let previous {
            restored = calls.rename(previous, target) == 0
            if !restored { unlink(previous) }
        } else {
            restored = unlink(target) == 0 || errno == ENOENT
        }
        _ = try? Self.syncFolder(folder, calls: calls)
        guard restored else {
            return EntryStoreError(
                code: .saveFailed, path: path,
                message: "cannot save \(path): could not sync its folder (\(failure.message)) nor put the previous file back; the file holds the new entries although the change is reported as failed")
        }
        return EntryStoreError(
            code: .saveFailed, path: path,
            message: "cannot save \(path): could not sync its folder (\(failure.message)); the file is unchanged")
    }

    // MARK: System calls

    /// A failed system call, with errno's text.
    struct SystemError: Error {
        let message: String
        init(_ operation: String) {
            let code = errno
            message = "\(operation): \(String(cString: strerror(code)))"
        }
        init(message: String) {
            self.message = message
        }
    }

    /// Writes `bytes` to a new file at `path` and fsyncs it; its mode copies `modeLike`'s when that exists.
    static func writeSynced(_ bytes: [UInt8], to path: String, modeLike original: String, calls: EntryFileCalls) throws {
        var mode: mode_t = 0o644
        var status = stat()
        if stat(original, &status) == 0 { mode = status.st_mode & 0o7777 }
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, mode)
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
