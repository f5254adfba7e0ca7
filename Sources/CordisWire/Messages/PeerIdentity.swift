/// Who a peer says it is in the handshake: protocol version, role, name, incarnation, addresses and
/// capabilities.
///
/// On the wire these are the members `version`, `role`, `name`, `incarnation`, `addresses` and
/// `capabilities` of `hello`, `challenge` and (unauthenticated) `welcome`.
public struct PeerIdentity: Sendable, Hashable {
    /// The protocol version the peer speaks.
    public var version: ProtocolVersion
    /// Node or console.
    public var role: PeerRole
    /// The peer's name (see `PeerName`).
    public var name: String
    /// An opaque token that changes every time the peer's process starts (1–128 bytes).
    public var incarnation: String
    /// Addresses others can dial to reach the peer (`unix:/path`, `tcp:HOST:PORT`); may be empty.
    public var addresses: [String]
    /// Optional features the peer supports, by name; unknown ones are ignored.
    public var capabilities: [String]

    /// An identity; `version` defaults to the one this library speaks.
    public init(
        version: ProtocolVersion = .current, role: PeerRole, name: String, incarnation: String,
        addresses: [String] = [], capabilities: [String] = []
    ) {
        self.version = version
        self.role = role
        self.name = name
        self.incarnation = incarnation
        self.addresses = addresses
        self.capabilities = capabilities
    }

    /// The longest incarnation accepted.
    public static let maximumIncarnationLength = 128
}
