import CordisJSON

/// One member in a `members` result, as the node reached sees it: `name`, `addresses`, `incarnation`,
/// `self`, `reachable`, then `health` and `linked` when the node sends them, in this order.
///
/// Decoding needs `name`; other missing members read as empty or `false` (`health` and `linked` as nil).
public struct MemberStatus: Sendable, Hashable, Codable {
    /// Its name.
    public var name: String
    /// The addresses it advertises.
    public var addresses: [String]
    /// Its incarnation.
    public var incarnation: String
    /// Whether it is the node that answered.
    public var isSelf: Bool
    /// Whether it answers (always true for the node itself): its health is `up`, `suspected` or `degraded`.
    public var reachable: Bool
    /// `up`, `suspected`, `down`, `stopped` or `degraded` (the node itself, in etcd mode), when the node
    /// sends it.
    public var health: String?
    /// Whether a link to it is up (always true for the node itself), when the node sends it.
    public var linked: Bool?

    /// The JSON members, in the order they are written.
    enum CodingKeys: String, CodingKey {
        case name, addresses, incarnation
        case isSelf = "self"
        case reachable, health, linked
    }

    /// Creates a member.
    public init(name: String, addresses: [String], incarnation: String, isSelf: Bool, reachable: Bool) {
        self.name = name
        self.addresses = addresses
        self.incarnation = incarnation
        self.isSelf = isSelf
        self.reachable = reachable
    }

    /// Decodes a member. Throws `DecodingError` (with `JSONValueDecoder`, `ConfigError`).
    public init(from decoder: any Decoder) throws {
        let container = try ObjectKey.lenientContainer(of: decoder, keyedBy: CodingKeys.self)
        name = try container.decode(String.self, forKey: .name)
        addresses = try container.decodeIfPresent([String].self, forKey: .addresses) ?? []
        incarnation = try container.decodeIfPresent(String.self, forKey: .incarnation) ?? ""
        isSelf = try container.decodeIfPresent(Bool.self, forKey: .isSelf) ?? false
        reachable = try container.decodeIfPresent(Bool.self, forKey: .reachable) ?? false
        health = try container.decodeIfPresent(String.self, forKey: .health)
        linked = try container.decodeIfPresent(Bool.self, forKey: .linked)
    }

    /// Encodes the member.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(name, forKey: .name)
        try container.encode(addresses, forKey: .addresses)
        try container.encode(incarnation, forKey: .incarnation)
        try container.encode(isSelf, forKey: .isSelf)
        try container.encode(reachable, forKey: .reachable)
        try container.encodeIfPresent(health, forKey: .health)
        try container.encodeIfPresent(linked, forKey: .linked)
    }
}
