/// The failure of a remote call as the caller sees it: `{code, message}`, the same shape as an
/// `error` reply on the wire.
///
/// The codes this module produces are `withdrawn` (the link closed), `timeout` (no answer in time),
/// `overloaded` (too many calls in flight), `cancelled` (the caller gave up) and `duplicateCall`; a
/// provider's own failures arrive under whatever code its `error` reply carries. The Cordis runtime's
/// `RemoteCallError` uses the same code strings.
public struct CallFailure: Error, Sendable, Hashable, CustomStringConvertible {
    /// A kind of call failure; the set is open, since providers send their own codes.
    public struct Code: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
        /// The code as it travels in an `error` reply.
        public let rawValue: String

        /// A code from its wire name.
        public init(rawValue: String) { self.rawValue = rawValue }

        /// The provider went away: the link closed (or the call was refused after it closed).
        public static let withdrawn = Code(rawValue: "withdrawn")
        /// No answer arrived within the call's timeout.
        public static let timeout = Code(rawValue: "timeout")
        /// Too many calls are already waiting for an answer on this link (either side's bound).
        public static let overloaded = Code(rawValue: "overloaded")
        /// The caller cancelled the call (`PendingCalls.cancel(_:)`).
        public static let cancelled = Code(rawValue: "cancelled")
        /// The peer sent a call whose id is already in flight on the link.
        public static let duplicateCall = Code(rawValue: "duplicateCall")

        public var description: String { rawValue }
    }

    /// What kind of failure this is.
    public var code: Code
    /// A sentence for people.
    public var message: String

    /// A failure with a code and a message.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// The failure an `error` reply describes.
    public init(_ reply: RemoteError) {
        self.init(Code(rawValue: reply.code), reply.message)
    }

    /// The `error` reply that tells the caller of call `id` about this failure.
    public func reply(to id: Int) -> WireMessage {
        .error(RemoteError(id: id, code: code.rawValue, message: message))
    }

    /// `code: message`.
    public var description: String { "\(code): \(message)" }
}
