/// An exporter that lives on `CordisActor` (cordis-ios's `LogExporter`): it receives log messages on
/// the actor, in the order they were logged, so it can keep plain actor-isolated state.
///
/// ```swift
/// struct Collector: LogExporter {
///   let level: LogLevel? = nil  // the logger's level: `LoggerIntercept.Config.level`, else info
///   @CordisActor func export(_ message: LogMessage) { lines.append(message.text) }
/// }
/// try ctx.logger.exporter(Collector())  // an effect of ctx's fiber
/// ```
///
/// A message logged on `CordisActor` is exported before the logging call returns. One logged on another
/// thread is queued and exported on the actor soon after, behind any messages still queued for this
/// exporter; at most `ExporterQueue.limit` messages wait per exporter, and past that the newest are dropped
/// and counted, and the exporter then receives one `warn` message saying how many. An exporter removed
/// (its fiber unloaded, its handle disposed) receives nothing more, not even messages still queued.
/// A sink that must see every record at once, on the logging thread, is a `LogSink`.
public protocol LogExporter: Sendable {
    /// The least severe level this exporter takes; nil takes the level of the logger that logs each
    /// message (`LoggerIntercept.Config.level`, `info` when no intercept sets one).
    var level: LogLevel? { get }
    /// Receives one message at or above its level, on `CordisActor`.
    @CordisActor func export(_ message: LogMessage)
}

extension LogExporter {
    /// Whether this exporter takes a record at `level` from a logger whose level is `loggerLevel`.
    func takes(_ level: LogLevel, loggerLevel: LogLevel?) -> Bool {
        level <= self.level ?? loggerLevel ?? LogLevel.loggerDefault
    }
}

extension LogLevel {
    /// A logger's level when no `LoggerIntercept` sets one (cordis-ios's default).
    static let loggerDefault = LogLevel.info
}

/// An exporter that prints each message to standard output as `[level] name: text` (cordis-ios's
/// `PrintExporter`, its default exporter where Apple's unified logging is not available).
///
/// On Linux, `StderrLogExporter` (stderr) and a node's journald exporter are the usual choices; this one
/// is for programs that print their logs with their other output.
public struct PrintExporter: LogExporter {
    /// The least severe level printed; nil is the logger's level.
    public let level: LogLevel?

    /// Creates an exporter for `level` and above (the logger's level when nil).
    public init(level: LogLevel? = nil) {
        self.level = level
    }

    /// Prints the line.
    @CordisActor public func export(_ message: LogMessage) {
        print("[\(message.level)] \(message.name): \(message.text)")
    }
}

/// An exporter that hands each message to a closure on `CordisActor` (cordis-ios's `ClosureExporter`).
public struct ClosureExporter: LogExporter {
    /// The least severe level passed on; nil is the logger's level.
    public let level: LogLevel?
    private let body: @CordisActor @Sendable (LogMessage) -> Void

    /// Creates an exporter for `level` and above (the logger's level when nil).
    public init(level: LogLevel? = nil, _ body: @escaping @CordisActor @Sendable (LogMessage) -> Void) {
        self.level = level
        self.body = body
    }

    /// Calls the closure.
    @CordisActor public func export(_ message: LogMessage) {
        body(message)
    }
}
