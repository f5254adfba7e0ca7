/// Why a signed tree was refused: the rule it broke, in the order a node checks them, and what exactly.
public struct SignedTreeError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The rules, in the order they are checked.
    public enum Rule: String, Sendable, Hashable, CaseIterable {
        /// The envelope or the payload is not the documented JSON.
        case shape
        /// The document is larger than 256 KiB.
        case size
        /// No trusted key made the signature.
        case signature
        /// The tree is for another node.
        case node
        /// Now is outside `issuedAt`…`expiresAt` (5 minutes of clock skew allowed).
        case window
        /// Its version is not greater than the last one applied.
        case freshness
        /// The entries are not a valid plugin tree for this node.
        case content
    }

    /// The rule broken.
    public var rule: Rule
    /// What was wrong.
    public var message: String

    /// Creates an error.
    public init(_ rule: Rule, _ message: String) {
        self.rule = rule
        self.message = message
    }

    /// `signed tree refused (RULE): MESSAGE`.
    public var description: String { "signed tree refused (\(rule.rawValue)): \(message)" }
}
