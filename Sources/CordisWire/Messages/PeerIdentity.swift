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

    /// The capability by which a side says the largest frame it accepts (protocol 1.4), `max-frame:N`.
    public static func maxFrameCapability(_ bytes: Int) -> String { "\(maxFramePrefix)\(bytes)" }

    private static let maxFramePrefix = "max-frame:"

    /// The largest frame the peer accepts, when it says so (`max-frame:N`, protocol 1.4; nil for a peer
    /// that does not, which takes the default, `Frame.defaultMaxSize`). A value below the handshake's
    /// frame limit, which every peer accepts, counts as that limit; one that is not a decimal number of
    /// at most 10 digits counts as unsaid.
    public var maxFrameSize: Int? {
        for capability in capabilities where capability.hasPrefix(Self.maxFramePrefix) {
            let digits = capability.utf8.dropFirst(Self.maxFramePrefix.utf8.count)
            guard !digits.isEmpty, digits.count <= 10, digits.allSatisfy({ (0x30...0x39).contains($0) }) else { return nil }
            let value = digits.reduce(0) { $0 * 10 + Int($1 - 0x30) }
            return max(value, Handshake.maxFrameSize)
        }
        return nil
    }
}
