#if canImport(Glibc)
import Glibc
#endif

/// libsystemd, opened on first use rather than linked at start: a node not run by systemd (no
/// notification socket, its log not on journald) never maps it, nor the libraries it pulls in
/// (gcrypt, gpg-error, lz4, zstd, lzma, cap: about 1 MB resident together).
enum SystemdLibrary {
    /// The functions the node calls: C function pointers, set once when the library is opened and never
    /// changed, so they may be read from any thread.
    struct Functions: @unchecked Sendable {
        /// `sd_notify(unset_environment, state)`.
        let notify: @convention(c) (Int32, UnsafePointer<CChar>?) -> Int32
        /// `sd_journal_sendv(iov, n)`.
        let journalSendv: @convention(c) (UnsafePointer<iovec>?, Int32) -> Int32
    }

    /// The library's soname, as Debian's `libsystemd0` installs it.
    static let soname = "libsystemd.so.0"

    /// The functions, or why they cannot be had; opened on the first read, once per process.
    static let functions: Result<Functions, SystemdError> = open()

    private static func open() -> Result<Functions, SystemdError> {
        guard let handle = dlopen(soname, RTLD_NOW | RTLD_LOCAL) else {
            return .failure(SystemdError(.libraryUnavailable, "cannot load \(soname): \(lastError())"))
        }
        guard let notify = dlsym(handle, "sd_notify"), let journalSendv = dlsym(handle, "sd_journal_sendv") else {
            return .failure(SystemdError(.libraryUnavailable, "\(soname) lacks sd_notify or sd_journal_sendv: \(lastError())"))
        }
        return .success(Functions(
            notify: unsafeBitCast(notify, to: (@convention(c) (Int32, UnsafePointer<CChar>?) -> Int32).self),
            journalSendv: unsafeBitCast(journalSendv, to: (@convention(c) (UnsafePointer<iovec>?, Int32) -> Int32).self)))
    }

    private static func lastError() -> String {
        dlerror().map { String(cString: $0) } ?? "unknown error"
    }
}
