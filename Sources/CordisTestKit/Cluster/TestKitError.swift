/// Why a kit operation or expectation failed, with the end of every node's log, so the test's failure
/// says what the nodes were doing (Swift Testing and XCTest both print a thrown error's description).
public struct TestKitError: Error, Sendable, CustomStringConvertible {
    /// What kind of failure it is; an extendable set of values.
    public struct Code: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
        /// The code's spelling.
        public let rawValue: String
        /// A code spelled `rawValue`.
        public init(rawValue: String) { self.rawValue = rawValue }
        /// An awaited state did not come within its deadline.
        public static let timeout = Code(rawValue: "timeout")
        /// A node could not be started, or exited while starting.
        public static let startFailed = Code(rawValue: "start-failed")
        /// A name or entry the cluster does not have, or an argument the kit refuses.
        public static let invalidArgument = Code(rawValue: "invalid-argument")
        /// The node answered a request with an error (its code and message are in the message).
        public static let refused = Code(rawValue: "refused")
        /// The node is not running (killed, stopped or exited) when the operation needs it to.
        public static let notRunning = Code(rawValue: "not-running")
        /// The code's spelling.
        public var description: String { rawValue }
    }

    /// What kind of failure it is.
    public var code: Code
    /// What happened and, where it helps, what to do.
    public var message: String
    /// The end of each node's log (name → text), in the order the nodes were started.
    public var logs: [(node: String, text: String)]
    /// The error underneath (a control link's, a spawn's), if any.
    public var underlying: (any Error)?

    /// Creates an error.
    public init(_ code: Code, _ message: String, logs: [(node: String, text: String)] = [], underlying: (any Error)? = nil) {
        self.code = code
        self.message = message
        self.logs = logs
        self.underlying = underlying
    }

    /// The message, then each node's log.
    public var description: String {
        var text = "\(code): \(message)"
        if let underlying { text += " (\(underlying))" }
        for log in logs {
            text += "\n--- \(log.node) ---\n" + (log.text.isEmpty ? "(nothing printed)" : log.text)
        }
        return text
    }
}
