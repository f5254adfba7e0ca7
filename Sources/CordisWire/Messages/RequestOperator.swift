/// Who asked for a control request that one node relays to another: the operator's name as the first
/// node saw it and every identity it matched there (`uid:1000`, `user:alice`, `group:ops`, `cluster`,
/// or an operator certificate's name). The node that runs the request checks its own operators file
/// against these identities.
///
/// On the wire: the optional member `operator` of `request`, `{"name": …, "identities": […]}`.
public struct RequestOperator: Sendable, Hashable {
    /// The operator's name for logs and events (`alice`, `uid:1000`, `cluster`).
    public var name: String
    /// The identities the operator is known by, matched against an operators file.
    public var identities: [String]

    /// The longest name or identity accepted, in UTF-8 bytes.
    public static let maximumTextLength = 256
    /// The most identities accepted (a user's groups included).
    public static let maximumIdentities = 128

    /// Creates an operator.
    public init(name: String, identities: [String]) {
        self.name = name
        self.identities = identities
    }
}
