/// A member's health as a node sees it (the words `members` and `status` use).
public enum MemberHealth: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// Linked and answering heartbeats.
    case up
    /// Linked but silent.
    case suspected
    /// Crashed, cut off, or its lease expired: nobody heard it leave.
    case down
    /// It said goodbye.
    case stopped
    /// Forgotten by an operator.
    case left
    /// This node, without its etcd lease (etcd mode).
    case degraded

    /// The health's spelling.
    public var description: String { rawValue }
}
