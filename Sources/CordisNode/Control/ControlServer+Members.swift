import Cordis
import CordisWire

/// Membership commands: `members` lists the cluster as this node sees it; `forget` drops a
/// decommissioned member (no more dialling, gone from the view) on every reachable member.
extension ControlServer {
    /// Every member this node knows, itself first, with its health (`memberHealth()`): `reachable`
    /// while it answers (up, suspected, degraded), and whether a link to it is up. A member down or
    /// stopped stays listed (in etcd mode too, once its registration ended); a forgotten one (`left`) is
    /// not listed.
    func membersList() throws -> JSONValue {
        let health = node.memberHealth()
        let list = node.members.compactMap { member -> MemberStatus? in
            guard let state = health[member.name], state != .left else { return nil }
            var status = MemberStatus(
                name: member.name, addresses: member.addresses, incarnation: member.incarnation,
                isSelf: member.name == node.name, reachable: state.isReachable)
            status.health = state.rawValue
            status.linked = member.name == node.name || node.link(to: member.name) != nil
            return status
        }
        return .object(["members": try JSONValueEncoder().encode(list)])
    }

    /// `forget`: drops `member` from the view and stops dialling it; told to every linked member too
    /// unless `propagate` is false.
    ///
    /// - Throws: `ControlError` `rejected` when the member is linked (stop it first), is this node, or
    ///   is not known.
    func forget(_ request: ControlRequest, by requester: OperatorIdentity?) throws -> JSONValue {
        let member = try request.args.requiredString("member")
        let directives = node.state.receive(.forgotten(name: member, relayed: request.args["propagate"]?.boolValue == false))
        if case .forgetRefused(_, let reason)? = directives.first { throw ControlError("rejected", reason) }
        node.carryOut(directives)
        guard case .forgot(_, let addresses, let tell)? = directives.last else { return .null }
        lastStatus[member] = nil
        lastHeard[member] = nil
        for id in tell {
            node.session(id)?.send(.request(ControlRequest(
                id: 0, command: .forget, args: ["member": .string(member), "propagate": false],
                operator: requester?.relayed)))
        }
        return .object(["forgotten": .string(member), "addresses": .array(addresses.map { .string($0) })])
    }
}
