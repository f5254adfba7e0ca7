/// The error of a remote call, as it travels: `{code, message}`.
public struct RemoteCallError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A kind of remote failure. The set is open: a provider's own error types travel under their names.
    public struct Code: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
        /// The code's stable name.
        public let rawValue: String
        /// Creates a code from its stable name.
        public init(rawValue: String) { self.rawValue = rawValue }
        /// The provider went away (withdrawn, its node died, or the link was cut).
        public static let withdrawn = Code(rawValue: "withdrawn")
        /// No answer within the call timeout.
        public static let timeout = Code(rawValue: "timeout")
        /// The provider's interface has no such method.
        public static let unknownMethod = Code(rawValue: "unknown-method")
        /// The arguments or the result did not decode.
        public static let invalidArguments = Code(rawValue: "invalid-arguments")
        /// Too many calls are waiting for an answer on this link.
        public static let overloaded = Code(rawValue: "overloaded")
        /// The provider's method threw.
        public static let failed = Code(rawValue: "failed")
        /// The code's stable name.
        public var description: String { rawValue }
    }

    /// What kind of failure this is.
    public var code: Code
    /// What happened.
    public var message: String

    /// Creates an error.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// `code: message`.
    public var description: String { "\(code): \(message)" }
}
