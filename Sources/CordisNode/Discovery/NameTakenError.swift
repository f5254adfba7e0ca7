/// A node's name is registered in etcd by a live member: the node must not start (exit 69).
public struct NameTakenError: Error, Sendable, CustomStringConvertible {
    /// What is wrong and what to do.
    public let message: String

    /// Creates the error.
    public init(_ message: String) {
        self.message = message
    }

    /// The message.
    public var description: String { message }
}
