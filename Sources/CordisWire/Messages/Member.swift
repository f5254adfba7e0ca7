/// A cluster member one node knows about, as listed in a `members` message.
public struct Member: Sendable, Hashable {
    /// The member's node name.
    public var name: String
    /// The addresses it advertises.
    public var addresses: [String]
    /// Its current incarnation.
    public var incarnation: String

    /// A member entry.
    public init(name: String, addresses: [String], incarnation: String) {
        self.name = name
        self.addresses = addresses
        self.incarnation = incarnation
    }
}
