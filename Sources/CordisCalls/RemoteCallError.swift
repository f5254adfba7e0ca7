/// The error of a remote call, as it travels: `{code, message}`.
///
/// The one error type of a call from the proxy to the wire: the runtime's proxies and dispatchers
/// (`Cordis`) and the transport's pending and inbound calls (`CordisWire`) all throw it, and both modules
/// re-export this one, so each code has one spelling (lower-case words joined by `-`).
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
        /// Too many calls are waiting for an answer on this link (either side's bound).
        public static let overloaded = Code(rawValue: "overloaded")
        /// The request or its result is larger than the link's frame limit: that call fails, the link stays up.
        public static let tooLarge = Code(rawValue: "too-large")
        /// The node called does not provide the service (in that realm).
        public static let unknownService = Code(rawValue: "unknown-service")
        /// The provider's interface has no such method.
        public static let unknownMethod = Code(rawValue: "unknown-method")
        /// The arguments or the result did not decode.
        public static let invalidArguments = Code(rawValue: "invalid-arguments")
        /// A call with the same id is already in flight on the link.
        public static let duplicateCall = Code(rawValue: "duplicate-call")
        /// The caller gave up the call.
        public static let cancelled = Code(rawValue: "cancelled")
        /// The provider speaks another version of the interface.
        public static let interfaceMismatch = Code(rawValue: "interface-mismatch")
        /// The provider's method threw; its message travels.
        public static let failed = Code(rawValue: "failed")
        /// Every code Cordis itself produces, each with its one spelling on the wire.
        public static let all: [Code] = [
            .withdrawn, .timeout, .overloaded, .tooLarge, .unknownService, .unknownMethod, .invalidArguments,
            .duplicateCall, .cancelled, .interfaceMismatch, .failed,
        ]
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
