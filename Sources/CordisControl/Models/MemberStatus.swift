import CordisJSON

/// One member in a `members` result, as the node reached sees it.
public struct MemberStatus: Sendable, Hashable {
    /// Its name.
    public var name: String
    /// The addresses it advertises.
    public var addresses: [String]
    /// Its incarnation.
    public var incarnation: String
    /// Whether it is the node that answered.
    public var isSelf: Bool
    /// Whether a link to it is up (always true for the node itself).
    public var reachable: Bool

    /// Creates a member.
    public init(name: String, addresses: [String], incarnation: String, isSelf: Bool, reachable: Bool) {
        self.name = name
        self.addresses = addresses
        self.incarnation = incarnation
        self.isSelf = isSelf
        self.reachable = reachable
    }

    /// The JSON object.
    public var json: JSONValue {
        .object([
            "name": .string(name), "addresses": .array(addresses.map { .string($0) }),
            "incarnation": .string(incarnation), "self": .bool(isSelf), "reachable": .bool(reachable),
        ])
    }

    /// Reads a member; nil without a name.
    public init?(json: JSONValue) {
        guard let name = json["name"]?.stringValue else { return nil }
        self.name = name
        addresses = (json["addresses"]?.arrayValue ?? []).compactMap(\.stringValue)
        incarnation = json["incarnation"]?.stringValue ?? ""
        isSelf = json["self"]?.boolValue ?? false
        reachable = json["reachable"]?.boolValue ?? false
    }
}
