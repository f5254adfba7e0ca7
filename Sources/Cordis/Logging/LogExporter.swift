import CordisFiles
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Where log records go: stderr, journald, a test's array.
///
/// `export` is called on whatever thread logged the record; implementations must be thread-safe.
public protocol LogExporter: Sendable {
    /// The least severe level this exporter takes.
    var level: LogLevel { get }
    /// Receives one record at or above `level`.
    func export(_ record: LogRecord)
}

/// Prints records to standard error as `LEVEL name: message`, one line each, flushed.
public struct StderrLogExporter: LogExporter {
    /// The least severe level printed.
    public let level: LogLevel

    /// Creates an exporter for `level` and above.
    public init(level: LogLevel) {
        self.level = level
    }

    /// Writes the line.
    public func export(_ record: LogRecord) {
        var line = "[\(record.level)] \(record.name): \(record.message)"
        for field in record.fields { line += " \(field.key)=\(field.value)" }
        line += "\n"
        StandardStreams.write(line, to: STDERR_FILENO)
    }
}
