/// A Loader change or start that was refused: the message names the entry and what is wrong.
///
/// When a change throws, nothing changed: neither the entries file nor the running fibers.
public struct LoaderError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The kind of refusal; an extendable set of names.
    public struct Code: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
        /// The code's stable name.
        public var rawValue: String
        /// Creates a code from its stable name.
        public init(rawValue: String) { self.rawValue = rawValue }
        /// The code's stable name.
        public var description: String { rawValue }

        /// No entry has this id.
        public static let unknownEntry = Code(rawValue: "unknown-entry")
        /// An entry with this id already exists somewhere in the tree.
        public static let duplicateID = Code(rawValue: "duplicate-id")
        /// The id is not 1–64 characters of `A-Z a-z 0-9 . _ -`.
        public static let invalidID = Code(rawValue: "invalid-id")
        /// The catalog has no plugin of that name.
        public static let unknownPlugin = Code(rawValue: "unknown-plugin")
        /// The config does not decode as the plugin's config type.
        public static let invalidConfig = Code(rawValue: "invalid-config")
        /// A field of the entry other than its config is refused (`inject` on a group, a service named
        /// twice in `inject`).
        public static let invalidEntry = Code(rawValue: "invalid-entry")
        /// The parent named for an entry is not a group.
        public static let notAGroup = Code(rawValue: "not-a-group")
        /// A group cannot move into itself or into one of its own descendants.
        public static let invalidMove = Code(rawValue: "invalid-move")
        /// The store could not save the changed tree.
        public static let saveFailed = Code(rawValue: "save-failed")
        /// The change would break a limit of `EntryTreeLimits` (depth of groups, number of entries,
        /// nesting or size of the file).
        public static let limitExceeded = Code(rawValue: "limit-exceeded")
        /// The Loader is not started (or was stopped): changes are refused.
        public static let notRunning = Code(rawValue: "not-running")
    }

    /// The kind of refusal.
    public var code: Code
    /// The entry concerned, when there is one.
    public var entryID: String?
    /// What was refused and why.
    public var message: String
    /// The error underneath (a `ConfigError`, an `EntryStoreError`…), if any.
    public var underlying: (any Error)?

    /// Creates an error.
    public init(_ code: Code, entryID: String? = nil, _ message: String, underlying: (any Error)? = nil) {
        self.code = code
        self.entryID = entryID
        self.message = message
        self.underlying = underlying
    }

    /// The message.
    public var description: String { message }

    public static func == (lhs: LoaderError, rhs: LoaderError) -> Bool {
        lhs.code == rhs.code && lhs.entryID == rhs.entryID && lhs.message == rhs.message
    }

    /// Whether `error` is this refusal, so that a `catch` clause can name one
    /// (`catch LoaderError.unknownEntry("weather")`, as with cordis-ios's enum).
    public static func ~= (pattern: LoaderError, error: any Error) -> Bool {
        (error as? LoaderError) == pattern
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(code)
        hasher.combine(entryID)
        hasher.combine(message)
    }
}

extension LoaderError {
    /// A tree's own error as a Loader refusal: `duplicate-id`, `invalid-entry` for a refused field
    /// (`inject`, `intercept`), `invalid-id` otherwise.
    init(error: EntryError) {
        let code: Code
        switch error.code {
        case .duplicateID: code = .duplicateID
        case .invalidField: code = .invalidEntry
        default: code = .invalidID
        }
        self.init(code, entryID: error.entryID, error.message, underlying: error)
    }

    /// The error a change naming entry `id` gets when no entry has that id (cordis-ios's
    /// `LoaderError.unknownEntry(id)`): `catch LoaderError.unknownEntry("weather")`, or `==`, matches it.
    /// To read the id from any refusal, use `entryID` (`code == .unknownEntry`).
    public static func unknownEntry(_ id: String) -> LoaderError {
        LoaderError(.unknownEntry, entryID: id, "unknown entry \"\(id)\"")
    }

    static func unknownPlugin(_ plugin: String, entry id: String) -> LoaderError {
        LoaderError(.unknownPlugin, entryID: id, "entry \"\(id)\": plugin \"\(plugin)\" is not in the catalog")
    }

    static func invalidConfig(_ error: any Error, entry id: String) -> LoaderError {
        LoaderError(.invalidConfig, entryID: id, "entry \"\(id)\": \(error)", underlying: error)
    }
}
