import Cordis
import CordisFiles

#if canImport(Glibc)
import Glibc
#endif

/// Sends log records to journald as structured entries (`sd_journal_sendv`), with the fields
/// `MESSAGE`, `PRIORITY`, `SYSLOG_IDENTIFIER`, `CORDIS_NODE`,
/// `CORDIS_FIBER` and the record's own fields (`CORDIS_ENTRY`, `CORDIS_PEER`…).
///
/// When `sd_journal_sendv` reports an error (an entry journald refuses, a full socket buffer), the
/// record is written to standard error as a `NodeStderrLogExporter` line instead. libsystemd itself
/// drops entries silently when the journal socket does not exist, which is why `NodeLogExporter` only
/// chooses this exporter when stderr is connected to journald. Safe to use from any thread.
public struct JournalLogExporter: LogSink {
    /// The least severe level sent.
    public let level: LogLevel
    /// The node's name, sent as `CORDIS_NODE`.
    public let node: String
    /// The `SYSLOG_IDENTIFIER` of every entry.
    public let identifier: String

    /// Creates an exporter for node `node`, sending `level` and more severe records.
    public init(node: String, level: LogLevel, identifier: String = "cordis-node") {
        self.node = node
        self.level = level
        self.identifier = identifier
    }

    /// Sends the record's entry, or writes its stderr line when `sd_journal_sendv` fails.
    public func export(_ record: LogMessage) {
        let fields = JournalFields.make(record: record, node: node, identifier: identifier)
        if Self.send(fields) < 0 {
            StandardStreams.write(NodeStderrLogExporter.line(record: record, node: node) + "\n", to: STDERR_FILENO)
        }
    }

    /// Sends one entry made of `fields` with `sd_journal_sendv`; returns its result (negative errno on
    /// failure, `-ENOSYS` when libsystemd cannot be loaded).
    static func send(_ fields: [(String, String)]) -> Int32 {
        var bytes: [UInt8] = []
        var spans: [(offset: Int, length: Int)] = []
        spans.reserveCapacity(fields.count)
        for (name, value) in fields {
            let start = bytes.count
            bytes.append(contentsOf: name.utf8)
            bytes.append(UInt8(ascii: "="))
            bytes.append(contentsOf: value.utf8)
            spans.append((start, bytes.count - start))
        }
        return bytes.withUnsafeMutableBytes { buffer -> Int32 in
            guard let base = buffer.baseAddress else { return -EINVAL }
            let vectors = spans.map { iovec(iov_base: base + $0.offset, iov_len: $0.length) }
            guard case .success(let systemd) = SystemdLibrary.functions else { return -ENOSYS }
            return vectors.withUnsafeBufferPointer { systemd.journalSendv($0.baseAddress, Int32($0.count)) }
        }
    }
}
