/// A control request the node refused or could not run.
public struct ControlFailure: Error, Sendable, Hashable, CustomStringConvertible {
    /// The node's error code (`rejected`, `unknown-command`, `unreachable`, …).
    public let code: String
    /// The node's message.
    public let message: String

    /// `message`.
    public var description: String { message }
}
