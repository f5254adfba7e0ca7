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
        public static let badLength = Code(rawValue: "bad-length")
        /// The stream ended in the middle of a frame.
        public static let truncated = Code(rawValue: "truncated")
        /// A frame's payload is not valid JSON.
        public static let malformedJSON = Code(rawValue: "malformed-json")
        /// A frame's payload is not valid UTF-8.
        public static let invalidUTF8 = Code(rawValue: "invalid-utf8")
        /// A frame's payload is valid JSON but not an object.
        public static let notAnObject = Code(rawValue: "not-an-object")
        /// A message has no string `type` member.
        public static let missingType = Code(rawValue: "missing-type")
        /// A message member is missing, has the wrong JSON type or an invalid value.
        public static let invalidField = Code(rawValue: "invalid-field")
        /// A message `type` this side does not know (after the handshake the link answers and stays up).
        public static let unknownType = Code(rawValue: "unknown-type")
        /// The peers speak different major protocol versions.
        public static let versionMismatch = Code(rawValue: "version-mismatch")
        /// A message arrived that is not the next one the handshake expects.
        public static let unexpectedMessage = Code(rawValue: "unexpected-message")
        /// The peer refused the handshake (its `reject` reason is the message).
        public static let rejected = Code(rawValue: "rejected")
        /// A handshake proof or a frame MAC does not verify.
        public static let badMAC = Code(rawValue: "bad-mac")
        /// A frame's sequence number is not the next one expected (replayed, reordered or dropped).
        public static let replay = Code(rawValue: "replay")
        /// One side requires authentication and the other does not offer it.
        public static let authenticationRequired = Code(rawValue: "authentication-required")
        /// A name is not 1–64 characters of `A-Z a-z 0-9 . _ -`.
        public static let invalidName = Code(rawValue: "invalid-name")
        /// The peer was authenticated but this side does not admit it (for example its name is taken).
        public static let notAdmitted = Code(rawValue: "not-admitted")
        /// A node-role peer uses the name of a live member of another incarnation (protocol 1.3).
        public static let nameTaken = Code(rawValue: "name-taken")
        /// A secret file does not exist or cannot be read.
        public static let secretUnreadable = Code(rawValue: "secret-unreadable")
        /// A secret file holds fewer than 32 bytes once surrounding whitespace is trimmed.
        public static let secretTooShort = Code(rawValue: "secret-too-short")
        /// A secret file is readable by its group or by others.
        public static let secretTooOpen = Code(rawValue: "secret-too-open")
        /// libcrypto failed (out of memory, no entropy).
        public static let crypto = Code(rawValue: "crypto")
        /// A node that requires TLS on TCP was dialled without TLS.
        public static let tlsRequired = Code(rawValue: "tls-required")
        /// A node without TLS was dialled with a TLS ClientHello.
        public static let tlsNotConfigured = Code(rawValue: "tls-not-configured")
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

    /// A `.rejected` error for the code a peer refused with (read in either spelling): `message` is
    /// `"\(context) (\(code)): \(reason)"`, from which `peerCode` reads it back.
    ///
    /// The code is kept in the message, not in a stored property of its own: with one more stored
    /// property, the debug build on Swift 6.3.1 crashed in the tests of `Handshake.receive(_:)` (the step
    /// returned from its typed-throws `catch` read as a null array), after a clean build of the modules
    /// too, and ran again once the property was removed.
    package static func rejected(_ context: String, code: String, reason: String, messageType: String? = nil) -> WireError {
        WireError(.rejected, "\(context) (\(Code(wire: code))): \(reason)", messageType: messageType)
    }

    /// With `.rejected`: the code the peer refused with, in this version's spelling whichever one the peer
    /// used; nil for any other error.
    public var peerCode: Code? {
        guard code == .rejected, let open = message.firstIndex(of: "("),
              let close = message[open...].firstIndex(of: ")")
        else { return nil }
        return Code(rawValue: String(message[message.index(after: open) ..< close]))
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

extension WireError.Code {
    /// The first protocol version whose handshake and link-level codes are lower-case words joined by `-`
    /// (`bad-length`), as call error codes always were. Earlier versions spell them in camelCase
    /// (`badLength`).
    public static let kebabCaseSince = ProtocolVersion(major: 1, minor: 5)

    /// A code as read from a `reject` or an `error` message, in either spelling: `badLength` (protocol 1.4
    /// and earlier) and `bad-length` are the same code. Any other text is kept as it is.
    public init(wire text: String) {
        self = Self.byCamelCase[text] ?? Self(rawValue: text)
    }

    /// How this code is written to a peer that speaks `version`: the camelCase of protocol 1.4 and earlier
    /// to an older peer, and while the peer's version is not known yet (a refusal of its first frame),
    /// since every version reads it; `rawValue` otherwise.
    package func spelled(for version: ProtocolVersion?) -> String {
        guard let version, version >= Self.kebabCaseSince else { return Self.camelCase[self] ?? rawValue }
        return rawValue
    }

    /// The codes that protocol 1.4 and earlier wrote in camelCase, with that spelling.
    private static let camelCase: [Self: String] = [
        .badLength: "badLength", .malformedJSON: "malformedJSON", .invalidUTF8: "invalidUTF8",
        .notAnObject: "notAnObject", .missingType: "missingType", .invalidField: "invalidField",
        .unknownType: "unknownType", .versionMismatch: "versionMismatch", .unexpectedMessage: "unexpectedMessage",
        .badMAC: "badMAC", .authenticationRequired: "authenticationRequired", .invalidName: "invalidName",
        .notAdmitted: "notAdmitted", .nameTaken: "nameTaken", .secretUnreadable: "secretUnreadable",
        .secretTooShort: "secretTooShort", .secretTooOpen: "secretTooOpen", .tlsRequired: "tlsRequired",
        .tlsNotConfigured: "tlsNotConfigured",
    ]

    private static let byCamelCase: [String: Self] = Dictionary(
        uniqueKeysWithValues: camelCase.map { ($0.value, $0.key) })
}
