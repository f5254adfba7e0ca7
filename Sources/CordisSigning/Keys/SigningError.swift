/// A key that cannot be read or used, or a signature that cannot be made.
public struct SigningError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What went wrong.
    public var message: String

    /// Creates an error.
    public init(_ message: String) {
        self.message = message
    }

    /// `message`.
    public var description: String { message }
}
