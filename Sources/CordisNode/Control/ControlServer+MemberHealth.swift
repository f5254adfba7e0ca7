import Cordis
import CordisWire

/// The membership events: this node's reading of every member's health (`Node.memberHealth()`), taken
/// at every heartbeat interval while the node runs; `NodeState` says what changed since the last.
extension ControlServer {
    /// Publishes a change of a member's health (`NodeState` compares each reading with the last) as a
    /// `member` event: a `down` or `stopped` with how long ago the member was last heard from, a `suspected` with how
    /// long it has been silent, a `degraded` with why, a `left` with `forgotten` when an operator forgot it.
    func publish(_ change: MemberHealth.Change) {
        var reason: String?
        switch change.change {
        case "down", "stopped": reason = lastSeen(change.member).map { "last heard from \(Int($0.rounded(.down))) s ago" }
        case "suspected": reason = node.link(to: change.member).map { session in
            "silent for \((NodeMetrics.seconds(since: session.link.lastHeard) * 10).rounded() / 10) s"
        }
        case "degraded": reason = node.degradedReason
        case "left": reason = node.state.forgottenNames.contains(change.member) ? "forgotten" : nil
        default: reason = nil
        }
        publishMember(change.member, change.change, reason: reason)
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
        memberHealthWatch?.cancel()
        let loop = node.loop
        memberHealthWatch = Task { @CordisActor [weak node] in
            while !Task.isCancelled {
                guard let node, node.running else { return }
                node.carryOut(node.state.receive(.healthRead(node.memberHealth())))
                await loop.pause(for: interval)
            }
        }
    }
}
