/// Why a `cordis-node` command line or its `--config` file was refused.
///
/// Every such error is bad usage: `exitCode` is 64 (`EX_USAGE`), a config file that cannot be read
/// included (66 is kept for an unreadable entries file). `description` is the line
/// to print on stderr: `error: unknown flag --lisen (did you mean --listen?)`.
public struct NodeOptionsError: Error, Sendable, CustomStringConvertible {
    /// What kind of mistake this is; an extendable set of static values.
    public struct Code: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
        /// The code's stable name.
        public let rawValue: String

        /// A code with the given stable name.
        public init(rawValue: String) { self.rawValue = rawValue }

        public var description: String { rawValue }

        /// A flag that `cordis-node` does not have.
        public static let unknownFlag = Code(rawValue: "unknown-flag")
        /// A flag that takes a value is the last argument, or is followed by another flag.
        public static let missingValue = Code(rawValue: "missing-value")
        /// A flag that takes no value was given one (`--help=yes`).
        public static let unexpectedValue = Code(rawValue: "unexpected-value")
        /// An argument that is not a flag; `cordis-node` takes none.
        public static let unexpectedArgument = Code(rawValue: "unexpected-argument")
        /// A flag that takes one value was given twice, or a list flag more often than it may be.
        public static let repeatedFlag = Code(rawValue: "repeated-flag")
        /// A value that does not fit its flag or config key (a bad duration, address, name...).
        public static let invalidValue = Code(rawValue: "invalid-value")
        /// A required setting (`--name`, `--entries`) is missing.
        public static let missingSetting = Code(rawValue: "missing-setting")
        /// Settings that are fine alone but not together (a TCP listener without a secret, a wildcard
        /// listener without `--advertise`, a heartbeat timeout shorter than the interval...).
        public static let conflict = Code(rawValue: "conflict")
        /// The `--config` file could not be read.
        public static let configUnreadable = Code(rawValue: "config-unreadable")
        /// The `--config` file is not JSON, or not a JSON object.
        public static let configSyntax = Code(rawValue: "config-syntax")
        /// The `--config` file has a key that is not a setting.
        public static let unknownKey = Code(rawValue: "unknown-key")
        /// A `--config` key holds a JSON value of the wrong type.
        public static let wrongType = Code(rawValue: "wrong-type")
    }

    /// The exit code of bad usage (`EX_USAGE`).
    public static let usageExitCode: Int32 = 64

    /// What kind of mistake this is.
    public var code: Code
    /// What is wrong and, where it helps, what to do; without the `error: ` prefix.
    public var message: String
    /// The failure underneath, when there is one (the file system's error, the JSON parse error).
    public var underlying: (any Error)?

    /// Creates an error.
    public init(_ code: Code, _ message: String, underlying: (any Error)? = nil) {
        self.code = code
        self.message = message
        self.underlying = underlying
    }

    /// The process exit code for this error: always 64.
    public var exitCode: Int32 { Self.usageExitCode }

    /// The line to print on stderr: `error: ` and the message.
    public var description: String { "error: \(message)" }
}
