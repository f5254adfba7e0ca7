import Synchronization

/// The operators file in force on a node, readable from any thread (the handshake's admission runs
/// on the event loop) and replaced on SIGHUP. Guarded by its `Mutex`.
public final class OperatorTable: Sendable {
    private let current: Mutex<OperatorsFile?>

    /// A table holding `file`; nil: every accepted console is admin.
    public init(_ file: OperatorsFile?) {
        current = Mutex(file)
    }

    /// The file in force, or nil when the node has none.
    public var file: OperatorsFile? { current.withLock { $0 } }

    /// Puts `file` in force.
    public func replace(with file: OperatorsFile?) {
        current.withLock { $0 = file }
    }

    /// The role of `identity`: admin without a file, the highest listed role with one, nil when the
    /// file lists none of its identities.
    public func role(of identity: OperatorIdentity) -> OperatorRole? {
        guard let file else { return .admin }
        return file.role(of: identity.identities)
    }
}
