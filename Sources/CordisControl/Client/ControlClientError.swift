/// Why a `ControlClient` request got no answer from the node.
public struct ControlClientError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The kind of failure.
    public struct Code: RawRepresentable, Sendable, Hashable {
        /// The code's name.
        public var rawValue: String
        /// Creates a code.
        public init(rawValue: String) { self.rawValue = rawValue }
        /// No answer within the request's timeout.
        public static let timeout = Code(rawValue: "timeout")
        /// The link closed before the answer came.
        public static let closed = Code(rawValue: "closed")
        /// The client already has as many requests waiting as it allows.
        public static let busy = Code(rawValue: "busy")
    }

    /// The kind of failure.
    public var code: Code
    /// What happened.
    public var message: String

    /// Creates an error.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// `message`.
    public var description: String { message }
}
