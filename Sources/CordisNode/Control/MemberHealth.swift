import Cordis
import CordisWire

/// A member's health, the one word `members`, `status`, `watch`, the web console, the `cordis_members`
/// metric and the membership events of `events --follow` all use. `NodeState.memberHealth` decides it,
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
enum MemberHealth: String, Sendable, Hashable, CaseIterable {
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

    /// Whether the member answers: `up`, `suspected` or `degraded` (a degraded node still serves its links).
    var isReachable: Bool { self == .up || self == .suspected || self == .degraded }

    /// One membership change, as a `member` event words it.
    struct Change: Sendable, Hashable {
        /// The member.
        var member: String
        /// `up`, `suspected`, `down`, `stopped`, `left`, `degraded` or `recovered`.
        var change: String
    }

    /// What changed between two readings of every member's health, by member name: a member seen for
    /// the first time or again is `up` (or whatever its health is), one that went from `degraded` to
    /// `up` is `recovered`, one no longer listed at all `left`.
    static func changes(from before: [String: MemberHealth], to now: [String: MemberHealth]) -> [Change] {
        var changes: [Change] = []
        for (member, health) in now.sorted(by: { $0.key < $1.key }) where before[member] != health {
            switch (before[member], health) {
            case (.degraded?, .up): changes.append(Change(member: member, change: "recovered"))
            case (nil, .left): continue
            default: changes.append(Change(member: member, change: health.rawValue))
            }
        }
        for member in before.keys.sorted() where now[member] == nil && before[member] != .left {
            changes.append(Change(member: member, change: "left"))
        }
        return changes
    }
}
