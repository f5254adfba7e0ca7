import Cordis
import CordisFiles

#if canImport(Glibc)
import Glibc
#endif

/// Writes log records to standard error, one line each, carrying the same fields as the journald
/// entries: `[warn] greeter: message CORDIS_NODE=a CORDIS_ENTRY=greeter` in the text format, one JSON
/// object a line in the JSON format (`JSONLogLine`).
///
/// Each line is written with one `write(2)` so concurrent records do not interleave; safe to use from
/// any thread.
public struct NodeStderrLogExporter: LogSink {
    /// The least severe level written.
    public let level: LogLevel
    /// The node's name, written as `CORDIS_NODE`.
    public let node: String
    /// How each line is written.
    public let format: LogFormat

    /// Creates an exporter for node `node`, writing `level` and more severe records in `format`.
    public init(node: String, level: LogLevel, format: LogFormat = .text) {
        self.node = node
        self.level = level
        self.format = format
    }

    /// Writes the record's line to standard error.
    public func export(_ record: LogMessage) {
        let line = switch format {
        case .text: Self.line(record: record, node: node)
        case .json: JSONLogLine.line(record: record, node: node)
        }
        StandardStreams.write(line + "\n", to: STDERR_FILENO)
    }

    /// The line for `record` (without its newline): `[level] logger: message` then ` KEY=value` for
    /// each field of `JournalFields.make(record:node:)` other than `MESSAGE`, `PRIORITY` and
    /// `SYSLOG_IDENTIFIER`.
    ///
    /// Line breaks in the message are escaped as `\n`; a value that is empty or holds a space, a quote,
    /// `=`, a backslash or a control character is written in double quotes with those escaped.
    package static func line(record: LogMessage, node: String) -> String {
        var line = "[\(record.level)] \(record.name): \(escapeBreaks(record.text))"
        for (name, value) in JournalFields.make(record: record, node: node) {
            switch name {
            case "MESSAGE", "PRIORITY", "SYSLOG_IDENTIFIER", "CORDIS_LOGGER": continue
            default: line += " \(name)=\(quoted(value))"
            }
        }
        return line
    }

    /// `value`, quoted and escaped when it would not read back as one token.
    static func quoted(_ value: String) -> String {
        let plain = !value.isEmpty && value.unicodeScalars.allSatisfy { scalar in
            scalar.value > 0x20 && scalar.value != 0x7F && scalar != "\"" && scalar != "=" && scalar != "\\"
        }
        if plain { return value }
        var text = "\""
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": text += "\\\""
            case "\\": text += "\\\\"
            case "\n": text += "\\n"
            case "\r": text += "\\r"
            case "\t": text += "\\t"
            default: text.unicodeScalars.append(scalar)
            }
        }
        return text + "\""
    }

    /// `text` with line breaks written as `\n` and `\r`.
    static func escapeBreaks(_ text: String) -> String {
        guard text.contains(where: \.isNewline) else { return text }
        var escaped = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\n": escaped += "\\n"
            case "\r": escaped += "\\r"
            default: escaped.unicodeScalars.append(scalar)
            }
        }
        return escaped
    }
}
