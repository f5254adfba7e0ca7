import FoundationEssentials

/// cordis-ios's name for a log record: what an exporter receives.
public typealias LogMessage = LogRecord

extension LogRecord {
    /// The message (cordis-ios's `LogMessage.text`).
    public var text: String { message }
    /// When it was logged (cordis-ios's `LogMessage.timestamp`).
    public var timestamp: Date { date }
}

/// The level cordis-ios's exporters take when they are given none: its logger's default, `info`.
let cordisIOSDefaultExportLevel = LogLevel.info

/// An exporter that prints each record to standard output as `[level] name: text` (cordis-ios's
/// `PrintExporter`, its default exporter where Apple's unified logging is not available).
///
/// On Linux, `StderrLogExporter` (stderr) and a node's journald exporter are the usual choices; this one
/// is for programs that print their logs with their other output.
public struct PrintExporter: LogExporter {
    /// The least severe level printed.
    public let level: LogLevel

    /// Creates an exporter for `level` and above (`info` when nil, as in cordis-ios).
    public init(level: LogLevel? = nil) {
        self.level = level ?? cordisIOSDefaultExportLevel
    }

    /// Prints the line.
    public func export(_ record: LogRecord) {
        print("[\(record.level)] \(record.name): \(record.message)")
    }
}

/// An exporter that hands each record to a closure (cordis-ios's `ClosureExporter`).
///
/// The closure is called on whatever thread logged the record (exporters here are thread-safe), not
/// on `CordisActor` as in cordis-ios: keep its state behind a lock, or hop to the actor in a task.
public struct ClosureExporter: LogExporter {
    /// The least severe level passed on.
    public let level: LogLevel
    private let body: @Sendable (LogMessage) -> Void

    /// Creates an exporter for `level` and above (`info` when nil, as in cordis-ios).
    public init(level: LogLevel? = nil, _ body: @escaping @Sendable (LogMessage) -> Void) {
        self.level = level ?? cordisIOSDefaultExportLevel
        self.body = body
    }

    /// Calls the closure.
    public func export(_ record: LogRecord) {
        body(record)
    }
}

extension Logger {
    /// The same logger under another name (cordis-ios's `named(_:)`; `ctx.logger(name)` here).
    public func named(_ name: String) -> Logger {
        var logger = Logger(name: name, hub: hub, fiberID: fiberID, fields: fields)
        logger.addExporter = addExporter
        return logger
    }

    /// Logs an error value as an error record, its description as the message (cordis-ios's
    /// `logger.error(_:)` taking an `Error`).
    public func error(_ error: any Error) {
        log(.error, String(describing: error))
    }
}
