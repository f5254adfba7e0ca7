import Cordis
import CordisControl
import CordisWire

extension MemberHealth {
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
