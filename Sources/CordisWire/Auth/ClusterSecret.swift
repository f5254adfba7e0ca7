import CordisFiles

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The cluster's shared key for HMAC-SHA256 authentication, read from a secret file.
///
/// A secret is at least `minimumLength` bytes once surrounding whitespace is trimmed. Its
/// `description` never shows the key.
public struct ClusterSecret: Sendable, Hashable, CustomStringConvertible {
    /// The fewest bytes a secret may have.
    public static let minimumLength = 32

    /// The key bytes.
    let bytes: [UInt8]
    /// Where the secret came from, for messages (a path, or "inline").
    public let source: String

    /// A secret from its bytes (surrounding whitespace is trimmed); throws `.secretTooShort`.
    public init(bytes: some Collection<UInt8>, source: String = "inline") throws(WireError) {
        let trimmed = Self.trimmingWhitespace(Array(bytes))
        guard trimmed.count >= Self.minimumLength else {
            throw WireError(
                .secretTooShort,
                "secret \(source) holds \(trimmed.count) bytes; at least \(Self.minimumLength) are required "
                    + "(generate one with `openssl rand -hex 32`)")
        }
        self.bytes = trimmed
        self.source = source
    }

    /// The largest secret file read (4 KiB): a key is a line of text.
    public static let maximumFileSize = 4096

    /// Reads the secret file at `path`: a regular file (or a symlink to one) that group and others can
    /// neither read nor write (no permission bit for them at all), at most `maximumFileSize` bytes,
    /// holding at least 32 bytes of key text (surrounding whitespace is trimmed).
    ///
    /// The file is opened without blocking, so a FIFO or a device given by mistake is refused at once.
    /// Messages never show the file's contents.
    /// Throws `.secretUnreadable` (missing, not a regular file, too large, unreadable), `.secretTooOpen`
    /// (its mode gives group or others any access; fix with `chmod 600`), or `.secretTooShort`.
    public static func load(contentsOf path: String) throws(WireError) -> ClusterSecret {
        let file: RegularFile
        do {
            guard let read = try RegularFile.read(path, maxSize: maximumFileSize) else {
                throw WireError(.secretUnreadable, "cannot read secret file \(path): \(String(cString: strerror(ENOENT)))")
            }
            file = read
        } catch let error as RegularFileError {
            throw WireError(.secretUnreadable, "cannot read secret file \(path): \(error.reason)")
        } catch let error as WireError {
            throw error
        } catch {
            throw WireError(.secretUnreadable, "cannot read secret file \(path)")
        }
        guard file.mode & 0o077 == 0 else {
            let mode = String(file.mode & 0o777, radix: 8)
            throw WireError(
                .secretTooOpen,
                "secret file \(path) is open to group or others (mode \(mode)): it must be neither readable nor writable by them; run `chmod 600 \(path)`")
        }
        return try ClusterSecret(bytes: file.bytes, source: path)
    }

    public var description: String { "ClusterSecret(\(source), \(bytes.count) bytes)" }

    static func trimmingWhitespace(_ bytes: [UInt8]) -> [UInt8] {
        func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || (0x09 ... 0x0D).contains(byte) }
        guard let first = bytes.firstIndex(where: { !isSpace($0) }),
              let last = bytes.lastIndex(where: { !isSpace($0) })
        else { return [] }
        return Array(bytes[first ... last])
    }
}
