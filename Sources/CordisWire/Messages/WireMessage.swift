import CordisJSON

/// Every message of the Cordis wire protocol: the payload of one frame, a JSON object with a `type`.
///
/// A `Link` encodes what you send and decodes what arrives (`messages`); you build and match the cases.
/// A `type` this version does not know decodes as `.unknown`, so a link can answer it with an `error`
/// and stay up; later versions add cases (status, loader, relay messages).
public enum WireMessage: Sendable, Hashable {
    /// Handshake, dialling side: identity, nonce, authentication offered.
    case hello(Hello)
    /// Handshake, accepting side (authenticated): its nonce only.
    case challenge(Challenge)
    /// Handshake, dialling side (authenticated): its 32-byte proof.
    case proof([UInt8])
    /// Handshake, accepting side: its identity (and proof when authenticated); the link is up.
    case welcome(Welcome)
    /// Handshake refused, by either side; the link closes.
    case reject(Rejection)
    /// Heartbeat request; answered by `pong` with the same id.
    case ping(id: Int)
    /// Heartbeat answer.
    case pong(id: Int)
    /// The members a node knows.
    case members([Member])
    /// A service is now provided.
    case announce(ServiceAnnouncement)
    /// A provider is leaving; every peer unloads its consumers, then acknowledges.
    case withdraw(ServiceProvider)
    /// A peer's consumers of the provider have unloaded.
    case withdrawAck(ServiceProvider)
    /// A remote method call.
    case call(RemoteCall)
    /// A call's return value.
    case result(RemoteResult)
    /// A call's failure, or (with no id) a link-level error such as an unknown type.
    case error(RemoteError)
    /// The caller no longer wants the answer to call `id`.
    case cancel(id: Int)
    /// The sender is closing the link in an orderly way; `leaving` (protocol 1.3) says a member is leaving
    /// the cluster, so the receiver drops it from its view instead of waiting for it to come back;
    /// `duplicate` (protocol 1.4) says the sender closes the link as a duplicate of another link of the same
    /// life, so the receiver drains it and keeps the other (a 1.3 sender said so with a reason starting
    /// with `duplicate:`).
    case goodbye(reason: String?, leaving: Bool = false, duplicate: Bool = false)
    /// A console's control request.
    case request(ControlRequest)
    /// A node's answer to a control request.
    case response(ControlResponse)
    /// A change pushed to a subscriber (`subscribe` request).
    case event(ControlEvent)
    /// A message whose `type` this version does not know, with its whole object.
    case unknown(type: String, body: JSONObject)

    /// The message's `type` on the wire.
    public var type: String {
        switch self {
        case .hello: return "hello"
        case .challenge: return "challenge"
        case .proof: return "proof"
        case .welcome: return "welcome"
        case .reject: return "reject"
        case .ping: return "ping"
        case .pong: return "pong"
        case .members: return "members"
        case .announce: return "announce"
        case .withdraw: return "withdraw"
        case .withdrawAck: return "withdrawAck"
        case .call: return "call"
        case .result: return "result"
        case .error: return "error"
        case .cancel: return "cancel"
        case .goodbye: return "goodbye"
        case .request: return "request"
        case .response: return "response"
        case .event: return "event"
        case .unknown(let type, _): return type
        }
    }

    /// True for the messages of the handshake (`hello`, `challenge`, `proof`, `welcome`, `reject`).
    public var isHandshake: Bool {
        switch self {
        case .hello, .challenge, .proof, .welcome, .reject: return true
        default: return false
        }
    }

    /// The reply a link sends to a message of unknown type after the handshake, with its code spelled
    /// for the version agreed with the peer.
    package static func unknownTypeReply(to type: String, version: ProtocolVersion) -> WireMessage {
        .error(RemoteError(
            id: nil, code: WireError.Code.unknownType.spelled(for: version),
            message: "unknown message type \"\(type.prefix(64))\""))
    }
}
