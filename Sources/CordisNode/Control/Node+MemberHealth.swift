import Cordis

extension Node {
    /// Each member this node knows, itself included, with its health as `NodeState` decides it
    /// (`NodeState.memberHealth`); forgotten members are `left`. The shell only reads its clock: how
    /// long each member's link in use has been silent.
    func memberHealth() -> [String: MemberHealth] {
        let now = ContinuousClock.now
        var silences: [String: Duration] = [:]
        for member in state.membership.linkedNames {
            if let session = link(to: member) { silences[member] = now - session.link.lastHeard }
        }
        return state.memberHealth(silences: silences, heartbeatTimeout: configuration.heartbeatTimeout)
    }
}
