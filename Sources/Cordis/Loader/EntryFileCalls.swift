#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The system calls `FileEntryStore.save` makes to replace the entries file, each one replaceable so a
/// test can make it fail at an exact step (a fault-injection seam). Each returns what the system call
/// returns and sets `errno` on failure.
struct EntryFileCalls: Sendable {
    /// `write(2)` to the temporary file.
    var write: @Sendable (_ descriptor: Int32, _ bytes: UnsafeRawPointer?, _ count: Int) -> Int
    /// `fsync(2)` of the temporary file.
    var syncFile: @Sendable (_ descriptor: Int32) -> Int32
    /// `link(2)`, keeping the previous file under a second name until the new one is durable.
    var link: @Sendable (_ existing: String, _ new: String) -> Int32
    /// `rename(2)`, the temporary file over the target (or the previous file back over it).
    var rename: @Sendable (_ from: String, _ to: String) -> Int32
    /// `fsync(2)` of the folder, after a rename.
    var syncFolder: @Sendable (_ descriptor: Int32) -> Int32

    /// The real system calls.
    static let system = EntryFileCalls(
        write: { descriptor, bytes, count in
            #if canImport(Glibc)
            Glibc.write(descriptor, bytes, count)
            #else
            Darwin.write(descriptor, bytes, count)
            #endif
        },
        syncFile: { fsync($0) },
        link: { existing, new in
            #if canImport(Glibc)
            Glibc.link(existing, new)
            #else
            Darwin.link(existing, new)
            #endif
        },
        rename: { from, to in
            #if canImport(Glibc)
            Glibc.rename(from, to)
            #else
            Darwin.rename(from, to)
            #endif
        },
        syncFolder: { fsync($0) })
}
