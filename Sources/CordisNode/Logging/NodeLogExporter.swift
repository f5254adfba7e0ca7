import Cordis
import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif

/// Chooses where a node's logs go: journald when standard error is connected to it, stderr lines
/// otherwise (text, or JSON objects with `--log-format json`).
///
/// systemd sets `JOURNAL_STREAM` to the `device:inode` of the stream it connected to the service's
/// stderr; the variable alone is not enough (a child of a service inherits it with its stderr
/// redirected), so the descriptor's own device and inode are compared with `fstat(2)`.
public enum NodeLogExporter {
    /// The exporter for node `node` at `level` in `format`, judged from this process's environment and stderr.
    public static func make(node: String, level: LogLevel, format: LogFormat = .text) -> any LogSink {
        make(node: node, level: level, format: format, environment: ProcessInfo.processInfo.environment)
    }

    /// The exporter for node `node` at `level`: a `JournalLogExporter` when `environment`'s
    /// `JOURNAL_STREAM` names `descriptor` (standard error by default), whatever `format`; else a
    /// `NodeStderrLogExporter` in `format`.
    public static func make(
        node: String, level: LogLevel, format: LogFormat = .text, environment: [String: String],
        descriptor: Int32 = STDERR_FILENO
    ) -> any LogSink {
        if isJournalStream(environment["JOURNAL_STREAM"], descriptor: descriptor) {
            return JournalLogExporter(node: node, level: level)
        }
        return NodeStderrLogExporter(node: node, level: level, format: format)
    }

    /// Whether `journalStream` (a `JOURNAL_STREAM` value, `device:inode` in decimal) names the file
    /// open on `descriptor`; false when it is nil, malformed, or names something else, or when the
    /// descriptor is not open.
    package static func isJournalStream(_ journalStream: String?, descriptor: Int32 = STDERR_FILENO) -> Bool {
        guard let journalStream else { return false }
        let parts = journalStream.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, let device = UInt64(parts[0]), let inode = UInt64(parts[1]) else { return false }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { return false }
        return UInt64(status.st_dev) == device && UInt64(status.st_ino) == inode
    }
}
