/// A Loader change or start that was refused: the message names the entry and what is wrong.
///
/// When a change throws, nothing changed: neither the entries file nor the running fibers.
/// A change naming an entry that does not exist throws `.unknownEntry(id)`, as cordis-ios's Loader does
/// (`catch LoaderError.unknownEntry(let id)`); every other refusal is `.refused`, with a `code` that says
/// which. `code`, `entryID` and `message` read the same for both.
public enum LoaderError: Error, Sendable, Hashable, CustomStringConvertible {
    /// No entry has this id.
    case unknownEntry(String)
    /// Any other refusal: its code, the entry concerned and the message.
    case refused(Refusal)

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

    /// A refusal other than an unknown entry.
    public struct Refusal: Sendable, Hashable {
        /// The kind of refusal.
        public var code: Code
        /// The entry concerned, when there is one.
        public var entryID: String?
        /// What was refused and why.
        public var message: String
        /// The error underneath (a `ConfigError`, an `EntryStoreError`…), if any.
        public var underlying: (any Error)?

        /// Creates a refusal.
        public init(_ code: Code, entryID: String? = nil, _ message: String, underlying: (any Error)? = nil) {
            self.code = code
            self.entryID = entryID
            self.message = message
            self.underlying = underlying
        }

        public static func == (lhs: Refusal, rhs: Refusal) -> Bool {
            lhs.code == rhs.code && lhs.entryID == rhs.entryID && lhs.message == rhs.message
        }

        public func hash(into hasher: inout Hasher) {
            hasher.combine(code)
            hasher.combine(entryID)
            hasher.combine(message)
        }
    }

    /// Creates an error: `.unknownEntry(entryID)` for the code `unknown-entry` with an entry, `.refused`
    /// otherwise.
    public init(_ code: Code, entryID: String? = nil, _ message: String, underlying: (any Error)? = nil) {
        if code == .unknownEntry, let entryID {
            self = .unknownEntry(entryID)
        } else {
            self = .refused(Refusal(code, entryID: entryID, message, underlying: underlying))
        }
    }

    /// The kind of refusal.
    public var code: Code {
        switch self {
        case .unknownEntry: return .unknownEntry
        case .refused(let refusal): return refusal.code
        }
    }

    /// The entry concerned, when there is one.
    public var entryID: String? {
        switch self {
        case .unknownEntry(let id): return id
        case .refused(let refusal): return refusal.entryID
        }
    }

    /// What was refused and why.
    public var message: String {
        switch self {
        case .unknownEntry(let id): return "unknown entry \"\(id)\""
        case .refused(let refusal): return refusal.message
        }
    }

    /// The error underneath (a `ConfigError`, an `EntryStoreError`…), if any.
    public var underlying: (any Error)? {
        if case .refused(let refusal) = self { return refusal.underlying }
        return nil
    }

    /// The message.
    public var description: String { message }
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

    static func unknownPlugin(_ plugin: String, entry id: String) -> LoaderError {
        LoaderError(.unknownPlugin, entryID: id, "entry \"\(id)\": plugin \"\(plugin)\" is not in the catalog")
    }

    static func invalidConfig(_ error: any Error, entry id: String) -> LoaderError {
        LoaderError(.invalidConfig, entryID: id, "entry \"\(id)\": \(error)", underlying: error)
    }
}
