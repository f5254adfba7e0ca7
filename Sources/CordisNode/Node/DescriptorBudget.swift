#if canImport(Glibc)
import Glibc
#endif

/// How many file descriptors a node may spend on connections, from its descriptor limit: the rest is a
/// reserve, so that however many peers connect the node can still save its entries file, write its log,
/// dial its members and accept (then shed) a connection.
///
/// A value computed from the limits, so the rule is tested without changing the process's own limit;
/// `NodeRunner` applies it at start (`apply()` raises the soft limit to the hard one first).
public struct DescriptorBudget: Sendable, Equatable {
    /// Descriptors kept out of the connection budget: the event loop's own (epoll, eventfd, timers),
    /// stdio and journald, a save (the temporary file, the folder, the file), dialled members and slack.
    public static let reserve = 64
    /// The smallest descriptor limit a node starts with.
    public static let minimumLimit: UInt64 = 128
    /// The most connections a node holds at once, whatever its limit.
    public static let maximumConnections = 4096

    /// The descriptor limit in force (the soft limit, after raising it).
    public var limit: UInt64
    /// Connections all listeners together may hold.
    public var connections: Int

    /// The budget for a process whose soft limit is `limit`.
    ///
    /// - Throws: `NodeStartError` when `limit` is below `minimumLimit`.
    package init(limit: UInt64) throws {
        guard limit >= Self.minimumLimit else {
            throw NodeStartError(
                "the open-file limit is \(limit) descriptors; a node needs at least \(Self.minimumLimit) "
                    + "(raise it with `ulimit -n` or LimitNOFILE= in the unit)")
        }
        self.limit = limit
        let spare = limit - UInt64(Self.reserve)
        self.connections = spare >= UInt64(Self.maximumConnections) ? Self.maximumConnections : Int(spare)
    }

    /// Each of `listeners` listeners' share of the connection budget (at least one).
    public func connectionsPerListener(_ listeners: Int) -> Int {
        max(1, connections / max(1, listeners))
    }

    /// Raises this process's soft descriptor limit to its hard limit (when it is lower) and returns the
    /// budget for the limit then in force.
    ///
    /// - Throws: `NodeStartError` when the limit cannot be read or is below `minimumLimit`.
    public static func apply() throws -> DescriptorBudget {
        var limits = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limits) == 0 else {
            throw NodeStartError("cannot read the open-file limit: \(String(cString: strerror(errno)))")
        }
        if limits.rlim_cur < limits.rlim_max {
            var raised = limits
            raised.rlim_cur = limits.rlim_max
            if setrlimit(Int32(RLIMIT_NOFILE.rawValue), &raised) == 0 { limits = raised }
        }
        return try DescriptorBudget(limit: UInt64(limits.rlim_cur))
    }
}
