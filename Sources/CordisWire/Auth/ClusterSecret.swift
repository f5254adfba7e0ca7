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

    /// Reads the secret file at `path`: a regular file, not readable by group or others, holding at
    /// least 32 bytes of key text (surrounding whitespace is trimmed).
    ///
    /// Throws `.secretUnreadable` (missing, not a regular file, unreadable), `.secretTooOpen` (mode
    /// allows group or others to read; fix with `chmod 600`), or `.secretTooShort`.
    public static func load(contentsOf path: String) throws(WireError) -> ClusterSecret {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            let reason = String(cString: strerror(errno))
            throw WireError(.secretUnreadable, "cannot open secret file \(path): \(reason)")
        }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else {
            let reason = String(cString: strerror(errno))
            throw WireError(.secretUnreadable, "cannot inspect secret file \(path): \(reason)")
        }
        guard status.st_mode & S_IFMT == S_IFREG else {
            throw WireError(.secretUnreadable, "secret file \(path) is not a regular file")
        }
        let openBits = status.st_mode & (S_IRGRP | S_IROTH)
        guard openBits == 0 else {
            let mode = String(status.st_mode & 0o777, radix: 8)
            throw WireError(
                .secretTooOpen,
                "secret file \(path) is readable by group or others (mode \(mode)); run `chmod 600 \(path)`")
        }
        guard status.st_size <= 65536 else {
            throw WireError(.secretUnreadable, "secret file \(path) is larger than 64 KiB")
        }
        var contents: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while contents.count <= 65536 {
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                let reason = String(cString: strerror(errno))
                throw WireError(.secretUnreadable, "cannot read secret file \(path): \(reason)")
            }
            if count == 0 { break }
            contents.append(contentsOf: chunk[0 ..< count])
        }
        return try ClusterSecret(bytes: contents, source: path)
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
