import Cordis
import CordisSigning
import CordisWire

/// What a node's control API keeps between requests: relays waiting for a member's answer, event
/// subscribers, recent events, and the last status seen of each member.
@CordisActor
final class ControlState {
    /// A request relayed to a member, waiting for its (possibly paged) answer.
    struct Relay {
        var member: String
        var pages: [JSONValue] = []
        var continuation: CheckedContinuation<JSONValue, any Error>
    }

    /// A session that asked for events.
    struct Subscriber {
        var session: PeerSession
        var id: Int
        /// Events of other members too (forwarded from their links).
        var cluster: Bool
        /// Only events of this member.
        var on: String?
        /// The operator it follows for (nil: a member's own subscription); other members' events reach
        /// it only through a subscription to them for that operator, which they check.
        var `operator`: OperatorIdentity?
    }

    /// A subscription to a member's events, on behalf of the cluster-wide subscribers of one operator.
    struct Upstream: Hashable {
        var member: String
        var `operator`: OperatorIdentity?
    }

    /// How many recent local events a node keeps for `events` without `--follow`.
    static let historyLimit = 256
    /// Requests running, by session id.
    var inFlight: [Int: Int] = [:]

    var relays: [Int: Relay] = [:]
    var nextRelayID = 0
    var subscribers: [Subscriber] = []
    /// The subscriptions to members this node holds for cluster-wide subscribers (one per member and
    /// operator), with the id of each.
    var followed: [Upstream: Int] = [:]
    /// The members followed (one subscription id of each).
    var upstream: [String: Int] {
        Dictionary(followed.map { ($0.key.member, $0.value) }, uniquingKeysWith: { first, _ in first })
    }
    var history: [ControlEvent] = []
    /// The last status object seen of each member (by name).
    var lastStatus: [String: JSONValue] = [:]
    /// When each member whose link ended was last heard from (the link's last frame), or last answered
    /// a status question: an unreachable member's `lastSeen`.
    var lastHeard: [String: ContinuousClock.Instant] = [:]
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
    /// Each member's health at the last look (nil before the first), for the membership events.
    var memberHealth: [String: MemberHealth]?
    /// The task that looks at the members' health while the node runs.
    var memberHealthWatch: Task<Void, Never>?
    /// What `/metrics` counts beside what the node holds: calls and withdrawals.
    let metrics = NodeMetrics()
    /// Whether a signed tree is being applied (one at a time, so two cannot pass the freshness check together).
    var applyingSignedTree = false

    /// Remembers a local event, dropping the oldest past `historyLimit`.
    func remember(_ event: ControlEvent) {
        history.append(event)
        if history.count > Self.historyLimit { history.removeFirst(history.count - Self.historyLimit) }
    }
}
