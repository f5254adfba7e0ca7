import Cordis
import CordisDiscovery
import CordisWire

/// What a node in etcd mode keeps beside its `EtcdDirectory` (the node's discovery): the etcd client, its lease and whether it
/// is degraded, and the links being opened on demand (which links are idle, and which service keys are
/// put or deleted, is `NodeState`'s to say). It drives etcd mode too (`EtcdMode+Driver.swift`): registration under the lease,
/// following the lease and the directory, publishing the exports as keys, links on demand, the idle
/// sweep, re-dialling.
/// Owned by the node (`Node.etcd`), on `CordisActor`.
@CordisActor
final class EtcdMode {
    /// The node this drives. The node owns it (`Node.etcd`), and work that outlives a call holds the
    /// node weakly, never this alone, so the node is there whenever this runs.
    unowned let node: Node
    /// The client of etcd's JSON gateway.
    let client: EtcdClient
    /// The lease's time to live.
    let leaseTTL: Duration
    /// The node's incarnation as registered: the process's own at start, a new one after each
    /// registration that replaced a lost lease (the old life was declared over by the others meanwhile).
    var incarnation: String
    /// The lease the node's keys live under (0 before registration); the keeper renews this one.
    var lease: Int64 = 0 {
        didSet { keeper.lease = lease }
    }
    /// Renews the lease off the actor and reports what each renewal came to.
    let keeper: LeaseKeeper
    /// Why the node is degraded (its lease lost or etcd unreachable past the TTL), nil when it is not
    /// (`NodeState`'s `LeaseRule` says).
    var degraded: String? { node.state.lease?.degraded }
    /// True while the exports are withdrawn because the lease has expired as far as the node can tell (no
    /// keepalive answered for a whole TTL): the others may already count this life as gone.
    var exportsWithdrawn: Bool { node.state.lease?.exportsWithdrawn == true }

    /// The lease's state as `/metrics` names it: `expired` (exports withdrawn), `degraded` (keepalives
    /// unanswered), `registering` (no lease yet) or `held`.
    var leaseState: String {
        if exportsWithdrawn { return "expired" }
        if degraded != nil { return "degraded" }
        return lease == 0 ? "registering" : "held"
    }
    /// The long-running work: the keeper's renewals and what they came to, the watch, the idle sweep.
    var tasks: [Task<Void, Never>] = []

    /// Creates etcd mode's state for `node` (`Node.etcd`), registered as `incarnation` once started.
    init(node: Node, client: EtcdClient, incarnation: String, leaseTTL: Duration) {
        self.node = node
        self.incarnation = incarnation
        self.client = client
        self.leaseTTL = leaseTTL
        self.keeper = LeaseKeeper(client: client, ttl: leaseTTL, loop: node.loop)
    }

    /// The TTL in whole seconds, as etcd grants it.
    var ttlSeconds: Int {
        let seconds = leaseTTL.components.seconds
        return Int(max(1, min(3600, seconds)))
    }
}
