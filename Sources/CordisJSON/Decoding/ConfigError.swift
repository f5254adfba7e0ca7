/// A configuration that does not match its type: every problem found, each with the path it is at.
///
/// Its description reads like cordis's:
/// ```
/// invalid config:
///   - expected integer, got string (at start)
///   - unknown key "strat" (at strat)
/// ```
public struct ConfigError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The kind of error; an extendable set of names.
    public struct Code: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
        public var rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        /// The value does not decode as the type asks.
        public static let invalidConfig = Code(rawValue: "invalid-config")
    }

    /// One problem at one place in the value.
    public struct Issue: Sendable, Hashable, CustomStringConvertible {
        /// The kind of problem; an extendable set of names.
        public struct Code: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
            public var rawValue: String
            public init(rawValue: String) { self.rawValue = rawValue }
            public var description: String { rawValue }

            /// The value has the wrong JSON type (`expected integer, got string`).
            public static let typeMismatch = Code(rawValue: "type-mismatch")
            /// A key the type does not read.
            public static let unknownKey = Code(rawValue: "unknown-key")
            /// A key the type requires is absent.
            public static let missingKey = Code(rawValue: "missing-key")
            /// The value has the right JSON type but is refused (out of range, not a known case…).
            public static let invalidValue = Code(rawValue: "invalid-value")
        }

        /// The kind of problem.
        public var code: Code
        /// Where: object keys and array indices from the root.
        public var path: [ConfigPathComponent]
        /// What is wrong, without the path (`expected integer, got string`).
        public var message: String

        /// Creates an issue.
        public init(code: Code, path: [ConfigPathComponent], message: String) {
            self.code = code
            self.path = path
            self.message = message
        }

        /// The path as text: `a.b[2].c`, or `root` for the whole value.
        public var pathDescription: String { ConfigPathComponent.describe(path) }

        /// `message (at path)`.
        public var description: String { "\(message) (at \(pathDescription))" }
    }

    /// The kind of error.
    public var code: Code
    /// Every problem found, in the order found.
    public var issues: [Issue]

    /// Creates an error from its issues.
    public init(code: Code = .invalidConfig, issues: [Issue]) {
        self.code = code
        self.issues = issues
    }

    /// The first line: `invalid config:`.
    public var message: String { "invalid config:" }

    /// `invalid config:` then one `  - message (at path)` line per issue.
    public var description: String {
        ([message] + issues.map { "  - \($0)" }).joined(separator: "\n")
    }
}

/// One step of a path into a JSON value: an object key or an array index.
public enum ConfigPathComponent: Sendable, Hashable, CustomStringConvertible {
    /// An object member.
    case key(String)
    /// An array element.
    case index(Int)

    /// `key` or `[index]`.
    public var description: String {
        switch self {
        case .key(let key): return key
        case .index(let index): return "[\(index)]"
        }
    }

    /// A path as text: keys joined by dots, indices in brackets (`a.b[2].c`); `root` when empty.
    public static func describe(_ path: [ConfigPathComponent]) -> String {
        guard !path.isEmpty else { return "root" }
        var text = ""
        for component in path {
            switch component {
            case .key(let key):
                if !text.isEmpty { text += "." }
                text += key
            case .index(let index):
                text += "[\(index)]"
            }
        }
        return text
    }
}
