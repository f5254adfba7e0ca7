/// An entry, or the entries file around it, that breaks the rules of the entries file: a field of the
/// wrong type, a bad or repeated id, an unsupported version.
///
/// The message names the entry: `entry "clock": field "disabled" must be a boolean`.
public struct EntryError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The kind of problem; an extendable set of names.
    public struct Code: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
        public var rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        /// A field has the wrong JSON type or value.
        public static let invalidField = Code(rawValue: "invalid-field")
        /// A required field is absent.
        public static let missingField = Code(rawValue: "missing-field")
        /// An id that is not 1–64 characters of `A-Z a-z 0-9 . _ -`.
        public static let invalidID = Code(rawValue: "invalid-id")
        /// Two entries in the tree share an id.
        public static let duplicateID = Code(rawValue: "duplicate-id")
        /// The file declares a version this build does not read.
        public static let unsupportedVersion = Code(rawValue: "unsupported-version")
        /// The tree breaks a limit of `EntryTreeLimits` (groups nested too deep, too many entries, a
        /// value nested too deep for the file to be read back).
        public static let limitExceeded = Code(rawValue: "limit-exceeded")
        /// The document is neither `{"version": …, "entries": […]}` nor an array of entries.
        public static let invalidDocument = Code(rawValue: "invalid-document")
    }

    /// The kind of problem.
    public var code: Code
    /// The id of the entry concerned, when known.
    public var entryID: String?
    /// What is wrong and, where it applies, which entry: `entry "x": field "disabled" must be a boolean`.
    public var message: String

    /// Creates an error.
    public init(code: Code, entryID: String? = nil, message: String) {
        self.code = code
        self.entryID = entryID
        self.message = message
    }

    public var description: String { message }
}
