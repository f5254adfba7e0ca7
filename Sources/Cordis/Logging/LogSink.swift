import CordisFiles
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A thread-safe destination for log records: stderr, journald, a test's array.
///
/// `export` is called on whatever thread logged the record, as soon as it is logged; implementations
/// must be thread-safe. Add one with `ctx.exportLogs(to:)` or `ctx.logger.exporter(_:)`. For an
/// exporter whose state lives on `CordisActor` (cordis-ios's shape), write a `LogExporter` instead.
public protocol LogSink: Sendable {
    /// The least severe level this sink takes.
    var level: LogLevel { get }
    /// Receives one record at or above `level`, on the thread that logged it.
    func export(_ record: LogMessage)
}

/// Prints records to standard error as `[level] name: message`, one line each, flushed.
public struct StderrLogExporter: LogSink {
    /// The least severe level printed.
    public let level: LogLevel

    /// Creates an exporter for `level` and above.
    public init(level: LogLevel) {
        self.level = level
    }

    /// Writes the line.
    public func export(_ record: LogMessage) {
        var line = "[\(record.level)] \(record.name): \(record.text)"
        for field in record.fields { line += " \(field.key)=\(field.value)" }
        line += "\n"
        StandardStreams.write(line, to: STDERR_FILENO)
    }
}
