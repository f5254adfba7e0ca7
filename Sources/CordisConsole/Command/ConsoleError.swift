/// A console failure: a message for stderr (`error: …`) and the exit code.
public struct ConsoleError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What kind of failure it is; decides the exit code.
    public struct Code: RawRepresentable, Sendable, Hashable {
        /// The code's name.
        public var rawValue: String
        /// Creates a code.
        public init(rawValue: String) { self.rawValue = rawValue }
        /// Bad command line: exit 64.
        public static let usage = Code(rawValue: "usage")
        /// The node rejected the change or the command failed: exit 1.
        public static let failed = Code(rawValue: "failed")
        /// No node could be reached or it did not answer in time: exit 69.
        public static let unavailable = Code(rawValue: "unavailable")
    }

    /// The kind of failure.
    public var code: Code
    /// What happened and, where it helps, what to do.
    public var message: String

    /// Creates an error.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// The process exit code for this failure.
    public var exitCode: Int32 {
        switch code {
        case .usage: return 64
        case .unavailable: return 69
        default: return 1
        }
    }

    /// `message`.
    public var description: String { message }
}
