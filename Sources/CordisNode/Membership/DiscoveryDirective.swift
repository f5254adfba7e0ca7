/// What a `MemberDiscovery` asks of the node.
enum DiscoveryDirective: Equatable, Sendable {
    /// Keep a link to this address: a dialler that re-dials while its member is unlinked (the mesh).
    case dial(String)
    /// Stop the dialler of this address.
    case stopDialling(String)
    /// Send the member list on the link now in use to `member` (the mesh's gossip).
    case sendMembers(to: String)
    /// The member life is over here: the proxies of its providers go (consumers drop to `pending`).
    case dropProxies(member: String, incarnation: String)
    /// Offer a proxy of a provider listed in etcd (a no-op when one exists for its life).
    case offer(EtcdDirectory.Listing)
    /// Retract the proxy of a provider no longer listed (no acknowledgement is owed).
    case retract(EtcdDirectory.Listing)
    /// The member life left etcd: close its links, fail its calls.
    case memberGone(name: String, incarnation: String)
    /// Dial this member once `after` has passed (its link failed while it is still listed, or the last
    /// re-dial failed); report a failure with `DiscoveryEvent.redialFailed`. A later `redial` of the same
    /// member replaces one not yet carried out.
    case redial(String, after: Duration)
    /// This node's own member key is gone from etcd while the node holds its lease: put it back, if the
    /// name is still free.
    case restoreOwnKey
    /// etcd holds keys under `cordis/` that no node uses (such as `example`): ignored, and said once.
    case ignoredUnknownKeys(example: String)
}
