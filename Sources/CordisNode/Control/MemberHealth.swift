import Cordis
import CordisWire

/// How this node sees each member's health, the one reading behind `members`, the `cordis_members`
/// metric and the membership events of `events --follow`.
///
/// - The node itself: `up`, or `degraded` while its etcd lease is lost (etcd mode).
/// - In the embedded mesh: a member is `up` while a link to it is, `down` otherwise; one that left the
///   cluster or was forgotten is no longer listed.
/// - In etcd mode: a member is `up` while it is registered (links open only where calls flow, so one
///   without a link is healthy), and no longer listed once its registration is gone (it left, or its
///   lease expired); a member still linked but not registered (yet) is `up` too.
enum MemberHealth: String, Sendable, Hashable, CaseIterable {
    /// Linked and heard from (or, in etcd mode, registered), or this node with its lease.
    case up
    /// Linked, but silent for more than half the heartbeat timeout: it may be about to be declared down.
    case suspected
    /// Not linked (in the mesh).
    case down
    /// This node, without its etcd lease.
    case degraded

    /// One membership change, as a `member` event words it.
    struct Change: Sendable, Hashable {
        /// The member.
        var member: String
        /// `up`, `suspected`, `down`, `left`, `degraded` or `recovered`.
        var change: String
    }

    /// What this node knows of one other member at a reading.
    struct Sighting: Sendable, Hashable {
        /// The member's name.
        var name: String
        /// How long the link in use to it has been silent; nil when it has no link.
        var silence: Duration?
        /// Whether the etcd directory lists it (etcd mode).
        var registered: Bool
    }

    /// Every member's health at one reading: this node `up` (or `degraded` with `degradedReason`), each
    /// other member `suspected` when its link has been silent for more than half `heartbeatTimeout`;
    /// otherwise, in the mesh, `up` while linked and `down` when not; in etcd mode, `up` while linked or
    /// registered, and not listed at all when neither. Forgotten members are not listed.
    static func reading(
        of node: String, degraded: Bool, members: [Sighting], forgotten: Set<String>, heartbeatTimeout: Duration,
        etcdMode: Bool
    ) -> [String: MemberHealth] {
        var health: [String: MemberHealth] = [node: degraded ? .degraded : .up]
        for member in members where member.name != node && !forgotten.contains(member.name) {
            let silent = member.silence.map { $0 > heartbeatTimeout / 2 } ?? false
            if etcdMode {
                guard member.silence != nil || member.registered else { continue }
                health[member.name] = silent ? .suspected : .up
            } else {
                health[member.name] = member.silence == nil ? .down : silent ? .suspected : .up
            }
        }
        return health
    }

    /// What changed between two readings of every member's health, by member name: a member seen for
    /// the first time or again is `up` (or `down`, or `degraded`), one that went from `degraded` to
    /// `up` is `recovered`, one no longer listed `left`.
    static func changes(from before: [String: MemberHealth], to now: [String: MemberHealth]) -> [Change] {
        var changes: [Change] = []
        for (member, health) in now.sorted(by: { $0.key < $1.key }) where before[member] != health {
            switch (before[member], health) {
            case (.degraded?, .up): changes.append(Change(member: member, change: "recovered"))
            default: changes.append(Change(member: member, change: health.rawValue))
            }
        }
        for member in before.keys.sorted() where now[member] == nil {
            changes.append(Change(member: member, change: "left"))
        }
        return changes
    }
}
