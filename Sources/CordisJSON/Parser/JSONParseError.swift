/// Why a JSON text was rejected, and where: the byte offset plus the 1-based line and column.
///
/// `message` reads like `unexpected character '}' at line 3, column 7`; `reason` is the same without
/// the position. Columns count Unicode scalars from the start of the line.
public struct JSONParseError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The kind of problem; an extendable set of names.
    public struct Code: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
        public var rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        /// A byte that cannot start or continue the value at that place.
        public static let unexpectedCharacter = Code(rawValue: "unexpected-character")
        /// The input ended inside a value.
        public static let unexpectedEnd = Code(rawValue: "unexpected-end")
        /// A number that breaks the JSON grammar (leading zero, missing digits).
        public static let invalidNumber = Code(rawValue: "invalid-number")
        /// A number too large for a `Double`.
        public static let numberOutOfRange = Code(rawValue: "number-out-of-range")
        /// An unknown backslash escape, or a `\u` escape without four hex digits.
        public static let invalidEscape = Code(rawValue: "invalid-escape")
        /// A `\u` escape that is an unpaired UTF-16 surrogate.
        public static let loneSurrogate = Code(rawValue: "lone-surrogate")
        /// A byte sequence that is not UTF-8.
        public static let invalidUTF8 = Code(rawValue: "invalid-utf8")
        /// A raw control character (below U+0020) inside a string.
        public static let controlCharacter = Code(rawValue: "control-character")
        /// An object with the same key twice.
        public static let duplicateKey = Code(rawValue: "duplicate-key")
        /// Arrays and objects nested deeper than the parser's limit.
        public static let depthLimitExceeded = Code(rawValue: "depth-limit-exceeded")
    }

    /// The kind of problem.
    public var code: Code
    /// The offset of the offending byte from the start of the input (the input's length at its end).
    public var offset: Int
    /// The 1-based line of the offending byte.
    public var line: Int
    /// The 1-based column (in Unicode scalars) of the offending byte.
    public var column: Int
    /// What went wrong, without the position (`unexpected character '}'`).
    public var reason: String

    /// Creates an error; `message` is built from `reason`, `line` and `column`.
    public init(code: Code, offset: Int, line: Int, column: Int, reason: String) {
        self.code = code
        self.offset = offset
        self.line = line
        self.column = column
        self.reason = reason
    }

    /// What went wrong and where: `unexpected character '}' at line 3, column 7`.
    public var message: String { "\(reason) at line \(line), column \(column)" }

    public var description: String { message }
}
