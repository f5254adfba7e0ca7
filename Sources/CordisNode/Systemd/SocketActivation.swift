#if canImport(Glibc)
import Glibc
#endif

/// Reads the sockets systemd passed to the process (socket activation: `LISTEN_PID`, `LISTEN_FDS`,
/// `LISTEN_FDNAMES`), following the rules of `sd_listen_fds_with_names`.
///
/// The variables are parsed here rather than by libsystemd so that the parsing can be tested with a
/// fake environment. The sockets start at descriptor 3. No `LISTEN_PID`, or one naming another process
/// (the variables were inherited), means "not activated": no sockets, no error.
public enum SocketActivation {
    /// The first descriptor systemd passes (`SD_LISTEN_FDS_START`).
    public static let firstDescriptor: Int32 = 3

    /// The sockets that `environment` passes to the process `processID`; touches no descriptor.
    ///
    /// - Returns: an empty array when `LISTEN_PID` or `LISTEN_FDS` is unset, or when `LISTEN_PID`
    ///   names another process.
    /// - Throws: `SystemdError` `invalidActivation` when `LISTEN_PID` or `LISTEN_FDS` is not a positive
    ///   number, or more sockets than the open-file limit allows, or `LISTEN_FDNAMES` does not hold
    ///   exactly one colon-separated name per socket.
    package static func sockets(environment: [String: String], processID: Int32) throws -> [ActivatedSocket] {
        try sockets(environment: environment, processID: processID, descriptorLimit: openFileLimit())
    }

    /// The sockets `environment` passes, refusing a count whose descriptors would reach
    /// `descriptorLimit` (the process's open-file limit: no descriptor at or past it can be open).
    package static func sockets(
        environment: [String: String], processID: Int32, descriptorLimit: Int64
    ) throws -> [ActivatedSocket] {
        guard let pidText = environment["LISTEN_PID"] else { return [] }
        guard let pid = Int32(pidText), pid > 0 else {
            throw SystemdError(.invalidActivation, "LISTEN_PID is not a process id: \"\(pidText)\"")
        }
        guard pid == processID else { return [] }
        guard let countText = environment["LISTEN_FDS"] else { return [] }
        guard let count = Int32(countText), count > 0, count <= Int32.max - firstDescriptor else {
            throw SystemdError(.invalidActivation, "LISTEN_FDS is not a positive count: \"\(countText)\"")
        }
        guard Int64(firstDescriptor) + Int64(count) <= descriptorLimit else {
            throw SystemdError(
                .invalidActivation,
                "LISTEN_FDS is \(count), more sockets than the open-file limit of \(descriptorLimit) descriptors allows")
        }
        var names = [String?](repeating: nil, count: Int(count))
        if let namesText = environment["LISTEN_FDNAMES"] {
            let given = namesText.split(separator: ":", omittingEmptySubsequences: false)
            guard given.count == Int(count) else {
                throw SystemdError(
                    .invalidActivation,
                    "LISTEN_FDNAMES has \(given.count) names for \(count) sockets: \"\(namesText)\"")
            }
            names = given.map { $0.isEmpty ? nil : String($0) }
        }
        return names.enumerated().map { index, name in
            ActivatedSocket(fd: firstDescriptor + Int32(index), name: name)
        }
    }

    /// The sockets passed to this process, each marked close-on-exec so they do not leak into child
    /// processes; call it once, early in `main`.
    ///
    /// With `unsettingEnvironment`, the three variables are removed from the environment afterwards
    /// (as `sd_listen_fds(1)` does), which is only safe while no other thread reads the environment.
    ///
    /// - Throws: `SystemdError` `invalidActivation` for malformed variables (see
    ///   `sockets(environment:processID:)`) or a passed descriptor that is not open.
    public static func takeSockets(unsettingEnvironment: Bool = false) throws -> [ActivatedSocket] {
        defer {
            if unsettingEnvironment {
                for name in variableNames { unsetenv(name) }
            }
        }
        var environment: [String: String] = [:]
        for name in variableNames {
            if let value = getenv(name) { environment[name] = String(cString: value) }
        }
        let sockets = try sockets(environment: environment, processID: getpid())
        for socket in sockets {
            let flags = fcntl(socket.fd, F_GETFD)
            guard flags >= 0, fcntl(socket.fd, F_SETFD, flags | FD_CLOEXEC) == 0 else {
                throw SystemdError(
                    .invalidActivation, "socket activation passed \(socket), which is not open", errno: errno)
            }
        }
        return sockets
    }

    /// The process's soft open-file limit (`RLIMIT_NOFILE`), or `Int32.max` when it cannot be read or
    /// is unlimited.
    static func openFileLimit() -> Int64 {
        var limits = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limits) == 0, limits.rlim_cur != rlim_t.max else {
            return Int64(Int32.max)
        }
        return Int64(clamping: limits.rlim_cur)
    }

    /// The variables socket activation sets.
    static let variableNames = ["LISTEN_PID", "LISTEN_FDS", "LISTEN_FDNAMES"]
}
