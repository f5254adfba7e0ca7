import CordisWire
import Synchronization

/// What a node's handshakes read off the actor, so a busy runtime never delays a peer's handshake: the
/// configuration accepted connections run with (nil while the node is not running), and the incarnation
/// of each member with a link up, for the early refusal of a name a live member holds. The node replaces
/// the configuration when its identity changes and records each member's link as it is adopted and lost;
/// admission is decided again, on the actor, when a link is adopted.
final class AcceptedHandshake: Sendable {
    private struct State {
        var configuration: HandshakeConfiguration?
        var live: [String: String] = [:]
    }

    private let state = Mutex(State())

    /// The configuration for the next connection accepted, with the early refusal of a live member's
    /// name (`refusingLiveNames`); nil while the node is not running.
    var configuration: HandshakeConfiguration? {
        get { state.withLock { $0.configuration }.map(refusingLiveNames) }
        set { state.withLock { $0.configuration = newValue } }
    }

    /// `configuration` refusing, at the handshake, a node-role peer that uses the name of a member linked
    /// now in another life (`Membership.nameConflict`), after whatever `configuration` refuses itself.
    func refusingLiveNames(_ configuration: HandshakeConfiguration) -> HandshakeConfiguration {
        var refusing = configuration
        let earlier = configuration.admit
        refusing.admit = { [self] peer in
            if let refusal = earlier?(peer) { return refusal }
            guard peer.role == .node,
                  let conflict = Membership.nameConflict(peer.name, incarnation: peer.incarnation, live: incarnation(of: peer.name))
            else { return nil }
            return Rejection(code: WireError.Code.nameTaken.rawValue, reason: conflict)
        }
        return refusing
    }

    /// The incarnation of the linked member `name`, if any.
    func incarnation(of name: String) -> String? { state.withLock { $0.live[name] } }

    /// Records (or, with nil, forgets) the linked life of `name`.
    func setLive(_ name: String, _ incarnation: String?) { state.withLock { $0.live[name] = incarnation } }
}
