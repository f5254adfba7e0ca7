import Cordis
import CordisFiles
import CordisJSON
import CordisSigning

#if canImport(Glibc)
import Glibc
#endif

/// A log record as one JSON object (`--log-format json`), the line `NodeStderrLogExporter` writes in
/// that format: `{"time": "2026-12-03T20:53:14.250Z", "level": "info", "message": "…", "CORDIS_NODE": "a",
/// …}` with `time` in RFC 3339 (UTC, milliseconds), `level` (`error`, `warn`, `info`, `debug`), `message`
/// (the record's own, without the logger's name), then the journald fields of
/// `JournalFields.make(record:node:)` by their journald names, as strings (`CORDIS_NODE`, `CORDIS_LOGGER`,
/// `CORDIS_FIBER`, `CORDIS_ENTRY`, `CORDIS_PEER`, `CORDIS_OPERATOR`…), without `MESSAGE`, `PRIORITY` and
/// `SYSLOG_IDENTIFIER`.
enum JSONLogLine {
    /// The JSON object for `record`, compact, without its newline (a line break in a value is escaped).
    static func line(record: LogMessage, node: String) -> String {
        var object = JSONObject()
        object["time"] = .string(timestamp(record.timestamp.timeIntervalSince1970))
        object["level"] = .string(record.level.description)
        object["message"] = .string(record.text)
        for (name, value) in JournalFields.make(record: record, node: node) {
            switch name {
            case "MESSAGE", "PRIORITY", "SYSLOG_IDENTIFIER": continue
            default: object[name] = .string(value)
            }
        }
        return JSONValue.object(object).jsonString(.compact)
    }

    /// `seconds` since 1970 in RFC 3339, UTC, with milliseconds: `2026-12-03T20:53:14.250Z`.
    static func timestamp(_ seconds: Double) -> String {
        guard seconds.isFinite, seconds >= 0, seconds < 253_402_300_800 else { return RFC3339.format(0) }
        let whole = seconds.rounded(.down)
        let millis = min(999, Int(((seconds - whole) * 1000).rounded(.down)))
        let digits = String(millis)
        return String(RFC3339.format(Int64(whole)).dropLast()) + "." + String(repeating: "0", count: 3 - digits.count) + digits + "Z"
    }
}
