/// An error raised by the Cordis runtime.
///
/// `code` says what kind of failure it is (compare it with the static values); `message` says what
/// happened and what to do about it.
public struct CordisError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A kind of runtime failure. The set is open: new codes may be added.
    public struct Code: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
        /// The code's stable name.
        public let rawValue: String
        /// Creates a code from its stable name.
        public init(rawValue: String) { self.rawValue = rawValue }
        /// A second ordinary provider for the same service in the same realm.
        public static let duplicateService = Code(rawValue: "duplicate-service")
        /// A service was read that the plugin did not inject, or that is not available.
        public static let serviceUnavailable = Code(rawValue: "service-unavailable")
        /// A config could not be decoded or validated.
        public static let invalidConfig = Code(rawValue: "invalid-config")
        /// An effect was made on a scope or context whose fiber is not loading or active (cordis-ios's
        /// `INACTIVE_EFFECT`: `cannot create effect on inactive context`).
        public static let inactiveEffect = Code(rawValue: "inactive-scope")
        /// The fiber was disposed.
        public static let disposed = Code(rawValue: "disposed")
        /// A remote provider went away during a call.
        public static let withdrawn = Code(rawValue: "withdrawn")
        /// A value of the wrong type was given.
        public static let typeMismatch = Code(rawValue: "type-mismatch")
        /// A name or id does not follow the rules.
        public static let invalidName = Code(rawValue: "invalid-name")
        /// A waterfall's `next` was called twice (cordis-ios's `NEXT_CALLED_MULTIPLE_TIMES`:
        /// `next() called multiple times`).
        public static let nextCalledMultipleTimes = Code(rawValue: "next-called-twice")
        /// A timer was given a delay it cannot wait for (negative, not finite, too long, or zero for an
        /// interval).
        public static let invalidDuration = Code(rawValue: "invalid-duration")
        /// The fiber unloaded while its code waited (`ctx.sleep`).
        public static let unloaded = Code(rawValue: "unloaded")
        /// The code's stable name.
        public var description: String { rawValue }
    }

    /// What kind of failure this is.
    public var code: Code
    /// What happened, and what to do.
    public var message: String

    /// Creates an error with a code and a message.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// The message.
    public var description: String { message }
}

extension CordisError {
    /// Whether an error means "a dependency went away", which returns a loading fiber to `pending`
    /// instead of `failed`.
    static func isWithdrawal(_ error: any Error) -> Bool {
        (error as? CordisError)?.code == .withdrawn || (error as? RemoteCallError)?.code == .withdrawn
    }
}
