#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A file read whole, safely: only a regular file (or a symlink to one), opened without blocking and
/// size-capped, so a FIFO, a device or a folder given by mistake is refused instead of hanging or
/// filling memory.
///
/// Errors never quote the file's bytes: a file that is refused is refused before it is read.
package struct RegularFile: Sendable {
    /// The file's bytes.
    package var bytes: [UInt8]
    /// Its permission bits (`st_mode & 0o7777`).
    package var mode: UInt32
    /// The uid of its owner.
    package var owner: UInt32

    /// Reads the file at `path` (following symlinks), at most `maxSize` bytes.
    ///
    /// - Returns: nil when nothing exists at `path` (or a symlink there points at nothing).
    /// - Throws: `RegularFileError` `.notRegular` (a folder, FIFO, socket or device), `.tooLarge`,
    ///   `.unreadable` (permissions, I/O errors); the message names the path, never the contents.
    package static func read(_ path: String, maxSize: Int) throws(RegularFileError) -> RegularFile? {
        let descriptor = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC)
        guard descriptor >= 0 else {
            let code = errno
            if code == ENOENT { return nil }
            throw RegularFileError(.unreadable, path: path, Self.reason(code))
        }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else {
            throw RegularFileError(.unreadable, path: path, "cannot inspect it: \(Self.reason(errno))")
        }
        guard status.st_mode & S_IFMT == S_IFREG else {
            throw RegularFileError(
                .notRegular, path: path, "it is \(Self.kind(of: status.st_mode)), not a regular file")
        }
        let limit = max(0, maxSize)
        guard status.st_size >= 0, UInt64(status.st_size) <= UInt64(limit) else {
            throw RegularFileError(.tooLarge, path: path, "it is larger than \(Self.size(limit)), the limit")
        }
        // Reads at most one byte past the limit: a file that grows meanwhile is refused, not followed.
        var bytes: [UInt8] = []
        bytes.reserveCapacity(Int(status.st_size))
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            // bytes.count <= limit here, so this cannot overflow however large the limit.
            let remaining = limit - bytes.count
            let wanted = remaining < chunk.count ? remaining + 1 : chunk.count
            let count = chunk.withUnsafeMutableBytes { systemRead(descriptor, $0.baseAddress, wanted) }
            if count < 0 {
                let code = errno
                if code == EINTR { continue }
                throw RegularFileError(.unreadable, path: path, Self.reason(code))
            }
            if count == 0 { break }
            bytes.append(contentsOf: chunk[0..<count])
            guard bytes.count <= limit else {
                throw RegularFileError(.tooLarge, path: path, "it is larger than \(Self.size(limit)), the limit")
            }
        }
        return RegularFile(bytes: bytes, mode: UInt32(status.st_mode & 0o7777), owner: UInt32(status.st_uid))
    }

    /// The path a write to `path` must replace so that a symlink there stays a symlink: the end of its
    /// chain of symlinks (relative targets are taken from the link's folder). `path` itself when it is
    /// not a symlink or does not exist.
    ///
    /// - Throws: `.unreadable` when a link cannot be read or the chain is longer than 40 links (a loop).
    package static func writeTarget(of path: String) throws(RegularFileError) -> String {
        var current = path
        for _ in 0..<40 {
            var status = stat()
            guard lstat(current, &status) == 0 else {
                let code = errno
                if code == ENOENT { return current }
                throw RegularFileError(.unreadable, path: path, "cannot inspect \(current): \(Self.reason(code))")
            }
            guard status.st_mode & S_IFMT == S_IFLNK else { return current }
            var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
            let length = readlink(current, &buffer, buffer.count - 1)
            guard length >= 0 else {
                throw RegularFileError(.unreadable, path: path, "cannot read the symlink \(current): \(Self.reason(errno))")
            }
            let target = String(decoding: buffer[0..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
            if target.hasPrefix("/") {
                current = target
            } else {
                current = folder(of: current) + "/" + target
            }
        }
        throw RegularFileError(.unreadable, path: path, "it is a chain of more than 40 symlinks (a loop?)")
    }

    /// The folder part of `path` (`.` for a bare name).
    package static func folder(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        if slash == path.startIndex { return "/" }
        return String(path[..<slash])
    }

    /// The last component of `path`.
    package static func name(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return path }
        return String(path[path.index(after: slash)...])
    }

    /// Whether `path` itself (not what it points at) is a symlink.
    package static func isSymlink(_ path: String) -> Bool {
        var status = stat()
        return lstat(path, &status) == 0 && status.st_mode & S_IFMT == S_IFLNK
    }

    private static func systemRead(_ descriptor: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int) -> Int {
        #if canImport(Glibc)
        Glibc.read(descriptor, buffer, count)
        #else
        Darwin.read(descriptor, buffer, count)
        #endif
    }

    static func reason(_ code: Int32) -> String {
        String(cString: strerror(code))
    }

    static func kind(of mode: mode_t) -> String {
        switch mode & S_IFMT {
        case S_IFDIR: return "a folder"
        case S_IFIFO: return "a FIFO"
        case S_IFSOCK: return "a socket"
        case S_IFCHR: return "a character device"
        case S_IFBLK: return "a block device"
        default: return "a special file"
        }
    }

    /// `16 MiB`, `4 KiB`, `100 bytes`.
    package static func size(_ bytes: Int) -> String {
        if bytes >= 1 << 20, bytes % (1 << 20) == 0 { return "\(bytes >> 20) MiB" }
        if bytes >= 1 << 10, bytes % (1 << 10) == 0 { return "\(bytes >> 10) KiB" }
        return "\(bytes) bytes"
    }
}
