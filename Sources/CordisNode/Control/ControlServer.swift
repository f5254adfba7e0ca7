import Cordis
import CordisControl
import CordisSigning
import CordisWire

/// The control API a node serves to authenticated consoles (and to the other members, which relay
/// requests and follow events through it): requests and their audit, relays to other members, the
/// event stream, operators and signed trees.
///
/// It keeps what the API needs between requests: relays waiting for a member's answer, recent events,
/// and the last status seen of each member. Who follows events, and which members this node follows for
/// them, is `NodeState`'s (`Subscriptions`). The node is the cluster's I/O
/// shell this API works through (its state, links, Loader and logger); the node owns it
/// (`Node.control`) and calls it for what reaches the API: a console's request, a member's response or
/// event, a link that ends.
@CordisActor
final class ControlServer {
    /// The node this API serves. The node owns the server (`Node.control`), and work that outlives a call
    /// (a request's task, a timer, a listener) holds the node weakly, never the server alone, so the node
    /// is there whenever the server runs.
    unowned let node: Node

    /// Creates the control API of `node` (`Node.control`).
    init(node: Node) {
        self.node = node
    }

    /// A request relayed to a member, waiting for its (possibly paged) answer.
    struct Relay {
        /// The member the request went to.
        var member: String
        /// The pages answered so far (a large status comes in several).
        var pages: [JSONValue] = []
        /// The relay's waiter, resumed with the joined answer or the error.
        var continuation: CheckedContinuation<JSONValue, any Error>
    }

    /// How many recent local events a node keeps for `events` without `--follow`.
    static let historyLimit = 256

    /// The requests relayed to members waiting for their answer, by relay id.
    var relays: [Int: Relay] = [:]
    /// This node's recent events (at most `historyLimit`).
    private var recent = RecentWindow<ControlEvent>(capacity: ControlServer.historyLimit)
    /// The last status object seen of each member (by name).
    var lastStatus: [String: JSONValue] = [:]
    /// When each member whose link ended was last heard from (the link's last frame), or last answered
    /// a status question: an unreachable member's `lastSeen`.
    var lastHeard: [String: ContinuousClock.Instant] = [:]
    /// The listeners that turn fibers' and entries' changes into events (held while the node is).
    var eventListeners: [EffectHandle] = []
    /// The operators file in force (readable from the event loop's handshakes).
    let operators = OperatorTable(nil)
    /// Each console's operator identity, by session id (worked out once per link).
    var operatorOfSession: [Int: OperatorIdentity] = [:]
    /// The keys whose signed trees this node applies (re-read on SIGHUP).
    var trustedKeys: TrustedKeys?
    /// The highest signed-tree version this node recorded while running (kept with the record file's
    /// own, whichever is higher).
    var highestSignedVersion: Int64 = 0
    /// The task that looks at the members' health while the node runs.
    var memberHealthWatch: Task<Void, Never>?
    /// What `/metrics` counts beside what the node holds: calls and withdrawals.
    let metrics = NodeMetrics()
    /// Whether a signed tree is being applied (one at a time, so two cannot pass the freshness check together).
    var applyingSignedTree = false

    /// This node's recent events, oldest first (at most `historyLimit`).
    var history: [ControlEvent] { recent.elements }

    /// Remembers a local event, dropping the oldest past `historyLimit`.
    func remember(_ event: ControlEvent) {
        recent.append(event)
    }
}
