/// An error of the wire protocol: a frame, a message, the handshake or frame authentication went wrong.
///
/// `code` says which rule was broken; `offset` is the position in the byte stream (of the frame's length
/// prefix, or of the offending byte when known) and `messageType` the `type` of the message concerned,
/// when known. Every wire error closes the link except `.unknownType`, which the link answers with an
/// `error` message.
public struct WireError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What kind of rule a `WireError` reports; an extendable set of static values.
    public struct Code: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
        /// The code's stable name, as written in logs and `reject`/`error` messages.
        public let rawValue: String

        /// A code with the given stable name.
        public init(rawValue: String) { self.rawValue = rawValue }

        public var description: String { rawValue }

        /// A frame's length prefix announces more than the configured maximum.
        public static let oversize = Code(rawValue: "oversize")
        /// A frame's length prefix is zero or otherwise impossible.
        public static let badLength = Code(rawValue: "badLength")
        /// The stream ended in the middle of a frame.
        public static let truncated = Code(rawValue: "truncated")
        /// A frame's payload is not valid JSON.
        public static let malformedJSON = Code(rawValue: "malformedJSON")
        /// A frame's payload is not valid UTF-8.
        public static let invalidUTF8 = Code(rawValue: "invalidUTF8")
        /// A frame's payload is valid JSON but not an object.
        public static let notAnObject = Code(rawValue: "notAnObject")
        /// A message has no string `type` member.
        public static let missingType = Code(rawValue: "missingType")
        /// A message member is missing, has the wrong JSON type or an invalid value.
        public static let invalidField = Code(rawValue: "invalidField")
        /// A message `type` this side does not know (after the handshake the link answers and stays up).
        public static let unknownType = Code(rawValue: "unknownType")
        /// The peers speak different major protocol versions.
        public static let versionMismatch = Code(rawValue: "versionMismatch")
        /// A message arrived that is not the next one the handshake expects.
        public static let unexpectedMessage = Code(rawValue: "unexpectedMessage")
        /// The peer refused the handshake (its `reject` reason is the message).
        public static let rejected = Code(rawValue: "rejected")
        /// A handshake proof or a frame MAC does not verify.
        public static let badMAC = Code(rawValue: "badMAC")
        /// A frame's sequence number is not the next one expected (replayed, reordered or dropped).
        public static let replay = Code(rawValue: "replay")
        /// One side requires authentication and the other does not offer it.
        public static let authenticationRequired = Code(rawValue: "authenticationRequired")
        /// A name is not 1–64 characters of `A-Z a-z 0-9 . _ -`.
        public static let invalidName = Code(rawValue: "invalidName")
        /// The peer was authenticated but this side does not admit it (for example its name is taken).
        public static let notAdmitted = Code(rawValue: "notAdmitted")
        /// A node-role peer uses the name of a live member of another incarnation (protocol 1.3).
        public static let nameTaken = Code(rawValue: "nameTaken")
        /// A secret file does not exist or cannot be read.
        public static let secretUnreadable = Code(rawValue: "secretUnreadable")
        /// A secret file holds fewer than 32 bytes once surrounding whitespace is trimmed.
        public static let secretTooShort = Code(rawValue: "secretTooShort")
        /// A secret file is readable by its group or by others.
        public static let secretTooOpen = Code(rawValue: "secretTooOpen")
        /// libcrypto failed (out of memory, no entropy).
        public static let crypto = Code(rawValue: "crypto")
    }

    /// Which rule was broken.
    public var code: Code
    /// What happened and, where it helps, what to do.
    public var message: String
    /// The byte offset in the stream where the problem was found, when known.
    public var offset: Int?
    /// The `type` of the message concerned, when known.
    public var messageType: String?

    /// An error with the given code and message, and optionally where it happened.
    public init(_ code: Code, _ message: String, offset: Int? = nil, messageType: String? = nil) {
        self.code = code
        self.message = message
        self.offset = offset
        self.messageType = messageType
    }

    /// True when the link must close; false only for an unknown message type, which is answered instead.
    public var closesLink: Bool { code != .unknownType }

    public var description: String {
        var text = "\(code): \(message)"
        if let messageType { text += " (message \(messageType))" }
        if let offset { text += " (at byte \(offset))" }
        return text
    }
}
