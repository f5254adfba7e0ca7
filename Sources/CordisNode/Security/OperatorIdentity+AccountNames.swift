import CordisWire

extension OperatorIdentity {
    /// This identity with the user and group names of `credentials` from the user and group databases
    /// (`user:NAME`, `group:NAME`, and the user's name as `name`): for logs, events and the identities
    /// a relayed request carries. The lookups may wait on a directory service: never call it on the
    /// event loop or the node's actor.
    public func addingAccountNames(of credentials: PeerCredentials) -> OperatorIdentity {
        var named = self
        if let user = AccountDatabase.userName(of: credentials.uid) {
            if !named.identities.contains("user:\(user)") { named.identities.append("user:\(user)") }
            if named.name == "uid:\(credentials.uid)" { named.name = user }
        }
        var seen: Set<UInt32> = []
        for gid in [credentials.gid] + credentials.groups where seen.insert(gid).inserted {
            if let group = AccountDatabase.groupName(of: gid), !named.identities.contains("group:\(group)") {
                named.identities.append("group:\(group)")
            }
        }
        return named
    }
}
