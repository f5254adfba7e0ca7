/// The name a Cordis certificate gives its holder, from a SAN URI: `cordis://node/NAME` for a node,
/// `cordis://operator/NAME` for an operator (a console).
public struct TLSPeerName: Sendable, Hashable, CustomStringConvertible {
    /// What the certificate is for.
    public enum Kind: String, Sendable, Hashable {
        /// A cluster node.
        case node
        /// An operator's console.
        case `operator`
    }

    /// What the certificate is for.
    public var kind: Kind
    /// The node's or the operator's name (1–64 characters of `A-Z a-z 0-9 . _ -`).
    public var name: String

    /// A name.
    public init(_ kind: Kind, _ name: String) {
        self.kind = kind
        self.name = name
    }

    /// The name in a SAN URI, or nil when the URI is not a Cordis name.
    public init?(uri: String) {
        for kind in [Kind.node, .operator] {
            let prefix = "cordis://\(kind.rawValue)/"
            guard uri.hasPrefix(prefix) else { continue }
            let name = String(uri.dropFirst(prefix.count))
            guard PeerName.isValid(name) else { return nil }
            self.init(kind, name)
            return
        }
        return nil
    }

    /// `cordis://KIND/NAME`.
    public var description: String { "cordis://\(kind.rawValue)/\(name)" }
}
