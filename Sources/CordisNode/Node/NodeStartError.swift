/// A node that cannot start as configured (for example a TCP listener without a secret).
public struct NodeStartError: Error, Sendable, CustomStringConvertible {
    /// What is wrong and what to do.
    public let message: String

    /// Creates the error.
    public init(_ message: String) {
        self.message = message
    }

    /// The message.
    public var description: String { message }
}
