import Cordis
import CordisSigning
import CordisWire

/// What a node's control API keeps between requests: relays waiting for a member's answer, event
/// subscribers, recent events, the last status seen of each member, and the forgotten members.
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
    }

    /// How many recent local events a node keeps for `events` without `--follow`.
    static let historyLimit = 256
    /// How many requests of one session may be running at once; more are answered `busy`.
    static let maximumInFlight = 64
    /// How many follow-subscriptions one session may hold; more are rejected.
    static let maximumFollows = 16

    /// Requests running, by session id.
    var inFlight: [Int: Int] = [:]

    var relays: [Int: Relay] = [:]
    var nextRelayID = 0
    var subscribers: [Subscriber] = []
    /// Members this node has subscribed to on behalf of cluster-wide subscribers, by name.
    var upstream: [String: Int] = [:]
    var history: [ControlEvent] = []
    /// The last status object seen of each member (by name).
    var lastStatus: [String: JSONValue] = [:]
    var forgottenNames: Set<String> = []
    var forgottenAddresses: Set<String> = []
    var eventListeners: [EffectHandle] = []
    /// The operators file in force (readable from the event loop's handshakes).
    let operators = OperatorTable(nil)
    /// Each console's operator identity, by session id (worked out once per link).
    var operatorOfSession: [Int: OperatorIdentity] = [:]
    /// The keys whose signed trees this node applies (re-read on SIGHUP).
    var trustedKeys: TrustedKeys?
    /// Whether a signed tree is being applied (one at a time, so two cannot pass the freshness check together).
    var applyingSignedTree = false

    /// Remembers a local event, dropping the oldest past `historyLimit`.
    func remember(_ event: ControlEvent) {
        history.append(event)
        if history.count > Self.historyLimit { history.removeFirst(history.count - Self.historyLimit) }
    }
}
