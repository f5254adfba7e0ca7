import CordisFiles
import CordisJSON
import CordisSigning

#if canImport(Glibc)
import Glibc
#endif

/// The version of the last signed tree a node applied, kept durably in a file beside its entries file
/// (`ENTRIES.signed-version`: `{"version": N, "keyId": "…", "appliedAt": "…"}`), so a replayed older
/// tree is refused even after a restart. Written atomically (temporary file, fsync, rename, fsync of
/// the folder).
public struct AppliedVersion: Sendable {
    /// The file.
    public let path: String

    /// The file beside the entries file `entriesFile`.
    public init(besideEntries entriesFile: String) {
        path = entriesFile + ".signed-version"
    }

    /// The last version applied; 0 when none was.
    ///
    /// - Throws: `SignedTreeError` `.freshness` when the file exists but cannot be read: every signed
    ///   tree is then refused rather than a replay risked.
    public func read() throws(SignedTreeError) -> Int64 {
        let file: RegularFile?
        do {
            file = try RegularFile.read(path, maxSize: 4096)
        } catch {
            throw SignedTreeError(.freshness, "cannot read the last applied version: \(error)")
        }
        guard let file else { return 0 }
        guard let value = try? JSONParser().parse(file.bytes), let version = value["version"]?.int64Value, version >= 0 else {
            throw SignedTreeError(.freshness, "\(path) does not hold the last applied version; fix or remove it")
        }
        return version
    }

    /// The file's bytes as they are, nil when there is none (to put back with `restore`).
    ///
    /// - Throws: `SignedTreeError` `.freshness` when it cannot be read.
    public func contents() throws(SignedTreeError) -> [UInt8]? {
        do {
            return try RegularFile.read(path, maxSize: 4096)?.bytes
        } catch {
            throw SignedTreeError(.freshness, "cannot read the last applied version: \(error)")
        }
    }

    /// Records `version` (signed by `keyID`) as the last applied.
    ///
    /// - Throws: `SignedTreeError` `.freshness` when it cannot be written durably.
    public func write(_ version: Int64, keyID: String, at seconds: Int64) throws(SignedTreeError) {
        let object: JSONObject = [
            "version": .integer(version), "keyId": .string(keyID), "appliedAt": .string(RFC3339.format(seconds)),
        ]
        try store(Array((JSONValue.object(object).jsonString(.compact) + "\n").utf8))
    }

    /// Puts back what `contents()` returned (removes the file when that was nil), durably.
    ///
    /// - Throws: `SignedTreeError` `.freshness` when it cannot.
    public func restore(_ previous: [UInt8]?) throws(SignedTreeError) {
        if let previous { return try store(previous) }
        guard unlink(path) == 0 || errno == ENOENT else { throw Self.failure("remove", path, errno) }
        try syncFolder()
    }

    private static func failure(_ what: String, _ path: String, _ code: Int32) -> SignedTreeError {
        let reason = strerror(code).map { String(cString: $0) } ?? "errno \(code)"
        return SignedTreeError(.freshness, "cannot record the applied version in \(path): \(what): \(reason)")
    }

    /// The folder holding the file.
    private var folder: String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        let folder = String(path[..<slash])
        return folder.isEmpty ? "/" : folder
    }

    private func syncFolder() throws(SignedTreeError) {
        let directory = open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard directory >= 0 else { throw Self.failure("open the folder", path, errno) }
        defer { close(directory) }
        guard fsync(directory) == 0 else { throw Self.failure("fsync the folder", path, errno) }
    }

    /// Writes `bytes` as the file: a temporary file (created afresh, never followed), fsync, rename,
    /// fsync of the folder.
    private func store(_ bytes: [UInt8]) throws(SignedTreeError) {
        let temporary = path + ".tmp.\(getpid())"
        func failure(_ what: String, _ code: Int32) -> SignedTreeError {
            unlink(temporary)
            return Self.failure(what, path, code)
        }
        // A file or link left at the temporary name (a crash, or planted) is removed, never followed.
        unlink(temporary)
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw failure("open", errno) }
        let written = bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
        let writeError = written < 0 ? errno : EIO
        guard written == bytes.count else {
            close(descriptor)
            throw failure("write", writeError)
        }
        guard fsync(descriptor) == 0 else {
            let code = errno
            close(descriptor)
            throw failure("fsync", code)
        }
        guard close(descriptor) == 0 else { throw failure("close", errno) }
        guard rename(temporary, path) == 0 else { throw failure("rename", errno) }
        try syncFolder()
    }
}
