/// An entries file that cannot be read, parsed or saved, naming the file and, for a parse error,
/// the line and column.
public struct EntryStoreError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The kind of problem; an extendable set of names.
    public struct Code: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
        public var rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        /// The file exists but cannot be read.
        public static let unreadable = Code(rawValue: "unreadable")
        /// The file is not valid JSON.
        public static let unparsable = Code(rawValue: "unparsable")
        /// The file is JSON but not a valid entry tree (see `EntryError`).
        public static let invalidEntries = Code(rawValue: "invalid-entries")
        /// The file, or the tree to save, breaks a limit of `EntryTreeLimits`.
        public static let limitExceeded = Code(rawValue: "limit-exceeded")
        /// The new tree could not be written; the old file is unchanged.
        public static let saveFailed = Code(rawValue: "save-failed")
        /// A custom `EntryStore` implements neither of its two pairs of `load` and `save`.
        public static let incomplete = Code(rawValue: "incomplete")
    }

    /// The kind of problem.
    public var code: Code
    /// The entries file's path.
    public var path: String
    /// The 1-based line of a parse error.
    public var line: Int?
    /// The 1-based column of a parse error.
    public var column: Int?
    /// What happened and what to do, naming the file.
    public var message: String
    /// The error underneath: a `JSONParseError`, an `EntryError`, or nil for system errors (in `message`).
    public var underlying: (any Error & Sendable)?

    /// Creates an error.
    public init(
        code: Code, path: String, line: Int? = nil, column: Int? = nil, message: String,
        underlying: (any Error & Sendable)? = nil
    ) {
        self.code = code
        self.path = path
        self.line = line
        self.column = column
        self.message = message
        self.underlying = underlying
    }

    public var description: String { message }

    public static func == (lhs: EntryStoreError, rhs: EntryStoreError) -> Bool {
        lhs.code == rhs.code && lhs.path == rhs.path && lhs.line == rhs.line && lhs.column == rhs.column
            && lhs.message == rhs.message
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(code)
        hasher.combine(path)
        hasher.combine(message)
    }
}
