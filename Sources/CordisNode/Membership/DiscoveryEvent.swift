import CordisDiscovery
import CordisWire

/// What a `MemberDiscovery` is told: the node's links as `Membership` decided them, what peers and the
/// operator say about members, and what etcd lists. A mode ignores the events that are not its own.
enum DiscoveryEvent: Equatable, Sendable {
    /// The node is up: the mesh dials its seeds.
    case started
    /// A link to a member life is in use now.
    case linked(member: String, incarnation: String, addresses: [String])
    /// The link in use to a member life ended; `inOrder` when it closed as idle (both sides said so),
    /// not because it failed.
    case unlinked(member: String, incarnation: String, inOrder: Bool)
    /// A dial of `address` reached `member` (its handshake named it), whether or not the member
    /// advertises that address (a seed may be another spelling of it).
    case dialled(address: String, member: String)
    /// A linked peer listed the members it knows (the mesh's gossip).
    case peerListed([Member])
    /// A linked member withdrew one of its provider lives over the link (its proxy here went).
    case linkWithdrew(member: String, life: Int)
    /// A linked member announced one of its provider lives over the link (its proxy here was made).
    case linkAnnounced(member: String, life: Int)
    /// An operator forgot a member.
    case forgotten(name: String)
    /// A member said it leaves the cluster (`goodbye` with `leaving`): no longer known nor dialled (but
    /// for the seeds), its proxies gone; not forgotten, so it may join again.
    case departed(member: String)
    /// etcd listed the whole prefix at `revision` (at start, and after a broken watch).
    case directoryListed([EtcdKeyValue], revision: Int64)
    /// etcd's watch reported changes.
    case directoryChanged([EtcdChange], revision: Int64)
    /// A re-dial of `member` (asked by `DiscoveryDirective.redial`) reached none of its addresses;
    /// `random` (in 0...1) is the jitter of the next delay.
    case redialFailed(member: String, random: Double)
}
