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

extension Node {
    /// Each member this node knows and has not forgotten, itself included, with its health.
    func memberHealth() -> [String: MemberHealth] {
        var health: [String: MemberHealth] = [name: degradedReason == nil ? .up : .degraded]
        let now = ContinuousClock.now
        for member in members where member.name != name && !state.forgottenNames.contains(member.name) {
            let session = link(to: member.name)
            // Half the heartbeat timeout without a frame on a link that is still up.
            let silent = session.map { now - $0.link.lastHeard > configuration.heartbeatTimeout / 2 } ?? false
            if etcd != nil {
                guard session != nil || state.discovery.member(named: member.name) != nil else { continue }
                health[member.name] = silent ? .suspected : .up
            } else {
                health[member.name] = session == nil ? .down : silent ? .suspected : .up
            }
        }
        return health
    }

    /// Compares the members' health with what it was at the last look and publishes each change as a
    /// `member` event (`MemberHealth.changes`): a `down` with how long ago the member was last heard
    /// from, a `degraded` with why, a `left` with `forgotten` when an operator forgot it.
    func publishMembershipChanges() {
        let now = memberHealth()
        let before = control.memberHealth
        control.memberHealth = now
        guard let before else { return }
        for change in MemberHealth.changes(from: before, to: now) {
            var reason: String?
            switch change.change {
            case "down": reason = lastSeen(change.member).map { "last heard from \(Int($0.rounded(.down))) s ago" }
            case "suspected": reason = link(to: change.member).map { session in
                let silence = (ContinuousClock.now - session.link.lastHeard).components
                let seconds = Double(silence.seconds) + Double(silence.attoseconds) / 1e18
                return "silent for \((seconds * 10).rounded() / 10) s"
            }
            case "degraded": reason = degradedReason
            case "left": reason = state.forgottenNames.contains(change.member) ? "forgotten" : nil
            default: reason = nil
            }
            publishMember(change.member, change.change, reason: reason)
        }
    }

    /// Publishes `member`'s `change` as a `member` event (`{"member", "change", "reason"}`).
    private func publishMember(_ member: String, _ change: String, reason: String?) {
        var detail: JSONObject = ["member": .string(member), "change": .string(change)]
        if let reason { detail["reason"] = .string(reason) }
        publish(kind: "member", detail: detail)
    }

    /// Looks at the members' health every `interval` while the node runs, publishing what changed. The
    /// task holds the node weakly and pauses on the node's loop; the node cancels it when it stops.
    func watchMemberHealth(every interval: Duration) {
        control.memberHealthWatch?.cancel()
        let loop = self.loop
        control.memberHealthWatch = Task { @CordisActor [weak self] in
            while !Task.isCancelled {
                guard let node = self, node.running else { return }
                node.publishMembershipChanges()
                await loop.pause(for: interval)
            }
        }
    }
}

