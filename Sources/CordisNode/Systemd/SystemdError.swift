#if canImport(Glibc)
import Glibc
#endif

/// A failure talking to systemd: a notification that could not be sent, or a socket-activation
/// environment that does not make sense.
///
/// Match on `code` (an extendable set of static values); `message` says what happened and what to do,
/// and `errno` carries the system error number when a system call or libsystemd failed.
public struct SystemdError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What kind of failure this is.
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        /// The stable identifier of the code.
        public let rawValue: String
        /// Creates a code; prefer the static values.
        public init(rawValue: String) { self.rawValue = rawValue }
        /// The identifier.
        public var description: String { rawValue }

        /// `sd_notify` failed: `NOTIFY_SOCKET` is malformed, or its socket cannot be reached.
        public static let notifyFailed = Code(rawValue: "notify-failed")
        /// `LISTEN_PID`, `LISTEN_FDS` or `LISTEN_FDNAMES` is malformed, or a passed descriptor is not open.
        public static let invalidActivation = Code(rawValue: "invalid-activation")
        /// libsystemd (`libsystemd.so.0`) is needed, because systemd runs the node, and cannot be loaded.
        public static let libraryUnavailable = Code(rawValue: "library-unavailable")
    }

    /// What kind of failure this is.
    public var code: Code
    /// What happened and, where it helps, what to do.
    public var message: String
    /// The system error number, when a system call or libsystemd failed.
    public var errno: Int32?

    /// Creates an error.
    public init(_ code: Code, _ message: String, errno: Int32? = nil) {
        self.code = code
        self.message = message
        self.errno = errno
    }

    /// `code: message` plus the system error text when there is one.
    public var description: String {
        guard let errno else { return "\(code): \(message)" }
        guard let text = strerror(errno) else { return "\(code): \(message): errno \(errno)" }
        return "\(code): \(message): \(String(cString: text))"
    }
}
