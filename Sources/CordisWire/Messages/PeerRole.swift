/// What a peer is: a cluster node or an operator's console; written on the wire as its raw value.
public struct PeerRole: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    /// The role's name on the wire.
    public let rawValue: String

    /// A role from its wire name (unknown roles are kept so a handshake can refuse them by name).
    public init(rawValue: String) { self.rawValue = rawValue }

    /// A cluster node.
    public static let node = PeerRole(rawValue: "node")
    /// An operator's console.
    public static let console = PeerRole(rawValue: "console")

    /// The roles this version knows.
    public static let known: [PeerRole] = [.node, .console]

    public var description: String { rawValue }
}
