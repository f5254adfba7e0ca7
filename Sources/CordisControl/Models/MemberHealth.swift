/// A member's health, the one word `members`, `status`, `watch`, the web console, the `cordis_members`
/// metric and the membership events of `events --follow` all use. The node decides it (`NodeState.memberHealth`),
/// the same way in the embedded mesh and in etcd mode:
///
/// - `up`: linked and heard from, or (etcd mode) registered without a link (links open only where calls
///   flow); the node itself with its lease.
/// - `suspected`: linked, but silent for more than half the heartbeat timeout.
/// - `down`: nobody heard it leave: its link failed or was cut (in etcd mode while still registered), or
///   its etcd lease expired. It stays listed, down, until it comes back or an operator forgets it.
/// - `stopped`: it said goodbye (an orderly stop) or marked its etcd registration as stopping before
///   removing it. Listed, stopped, until it comes back or is forgotten.
/// - `left`: an operator forgot it; no longer listed by `members` nor asked by `status`.
/// - `degraded`: the node itself, without its etcd lease.
public enum MemberHealth: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// Linked and heard from (or, in etcd mode, registered), or this node with its lease.
    case up
    /// Linked, but silent for more than half the heartbeat timeout: it may be about to be declared down.
    case suspected
    /// Not heard from, and nobody heard it leave: crashed, cut off, or its etcd lease expired.
    case down
    /// It said goodbye (stopped in order), or removed its own etcd registration.
    case stopped
    /// Forgotten by an operator.
    case left
    /// This node, without its etcd lease.
    case degraded

    /// The health's spelling.
    public var description: String { rawValue }
}
