import Cordis

extension Node {
    /// Each member this node knows and has not forgotten, itself included, with its health
    /// (`MemberHealth.reading`).
    func memberHealth() -> [String: MemberHealth] {
        let now = ContinuousClock.now
        let sightings = members.map { member in
            MemberHealth.Sighting(
                name: member.name, silence: link(to: member.name).map { now - $0.link.lastHeard },
                registered: state.discovery.member(named: member.name) != nil)
        }
        return MemberHealth.reading(
            of: name, degraded: degradedReason != nil, members: sightings, forgotten: state.forgottenNames,
            heartbeatTimeout: configuration.heartbeatTimeout, etcdMode: etcd != nil)
    }
}
