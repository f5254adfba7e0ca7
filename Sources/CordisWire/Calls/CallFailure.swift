/// The failure of a remote call as the caller sees it: `{code, message}`, the same shape as an
/// `error` reply on the wire.
///
/// The codes this module produces are `withdrawn` (the link closed), `timeout` (no answer in time),
/// `overloaded` (too many calls in flight), `cancelled` (the caller gave up), `duplicate-call` and
/// `too-large`; a provider's own failures arrive under whatever code its `error` reply carries. The
/// codes are spelled exactly as the Cordis runtime's `RemoteCallError` spells them (this module does
/// not depend on it): the node turns one into the other by the code's name alone.
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
        public static let duplicateCall = Code(rawValue: "duplicate-call")
        /// The call or its result does not fit in one frame: that call fails, the link stays up.
        public static let tooLarge = Code(rawValue: "too-large")

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
