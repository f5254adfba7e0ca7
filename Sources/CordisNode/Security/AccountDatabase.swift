#if canImport(Glibc)
import Glibc
#endif

/// Lookups in the system's password and group databases through their re-entrant calls
/// (`getpwnam_r`, `getpwuid_r`, `getgrnam_r`, `getgrgid_r`): safe from any thread, but they may wait on
/// a directory service, so never called on the event loop or `CordisActor`.
enum AccountDatabase {
    /// The uid of user `name`, or nil.
    static func userID(named name: String) -> UInt32? {
        lookup(passwd(), bufferSize: 4096, { getpwnam_r(name, $0, $1, $2, $3) }) { $0.pw_uid }
    }

    /// The gid of group `name`, or nil.
    static func groupID(named name: String) -> UInt32? {
        lookup(group(), bufferSize: 16384, { getgrnam_r(name, $0, $1, $2, $3) }) { $0.gr_gid }
    }

    /// The name of the user `uid`, or nil.
    static func userName(of uid: UInt32) -> String? {
        lookup(passwd(), bufferSize: 4096, { getpwuid_r(uid, $0, $1, $2, $3) }) { $0.pw_name.map { String(cString: $0) } }
    }

    /// The name of the group `gid`, or nil.
    static func groupName(of gid: UInt32) -> String? {
        lookup(group(), bufferSize: 16384, { getgrgid_r(gid, $0, $1, $2, $3) }) { $0.gr_name.map { String(cString: $0) } }
    }

    /// Runs one re-entrant lookup into a buffer of `bufferSize` bytes and reads the entry found while
    /// the buffer (which its strings point into) still lives.
    private static func lookup<Entry, Value>(
        _ empty: Entry, bufferSize: Int,
        _ call: (UnsafeMutablePointer<Entry>, UnsafeMutablePointer<CChar>, Int, UnsafeMutablePointer<UnsafeMutablePointer<Entry>?>) -> Int32,
        read: (Entry) -> Value?
    ) -> Value? {
        var entry = empty
        var result: UnsafeMutablePointer<Entry>?
        var buffer = [CChar](repeating: 0, count: bufferSize)
        return buffer.withUnsafeMutableBufferPointer { storage -> Value? in
            guard let base = storage.baseAddress, call(&entry, base, storage.count, &result) == 0, result != nil else {
                return nil
            }
            return read(entry)
        }
    }
}
