import CordisControl
import CordisJSON
import CordisWire
import Foundation

/// One event as a line: `2025-01-02T03:04:05.678Z a status greeter#7 [greeter] pending → active`, or
/// as one JSON object per line with `--json`.
public enum EventText {
    /// The text line for an event.
    public static func line(_ record: EventRecord) -> String {
        "\(timestamp(record.time)) \(record.node) \(describe(kind: record.kind, detail: .object(record.detail)))\n"
    }

    /// The line for an event: text, or with `json` its record as one compact JSON object.
    ///
    /// - Throws: `EncodingError` for a time that is not finite (JSON cannot write it).
    public static func line(_ record: EventRecord, json: Bool) throws -> String {
        guard json else { return line(record) }
        return try JSONValueEncoder().encode(record).jsonString(.compact) + "\n"
    }

    /// What happened, without the time and node.
    public static func describe(kind: String, detail: JSONValue) -> String {
        switch kind {
        case "status":
            let plugin = detail["plugin"]?.stringValue ?? "?"
            let fiber = detail["fiber"]?.intValue.map { "#\($0)" } ?? ""
            let entry = detail["entry"]?.stringValue.map { " [\($0)]" } ?? ""
            var text = "status \(plugin)\(fiber)\(entry) \(detail["from"]?.stringValue ?? "?") → \(detail["to"]?.stringValue ?? "?")"
            if let error = detail["error"]?.stringValue { text += " (\(error))" }
            return text
        case "change":
            let who = detail["operator"]?.stringValue ?? "?"
            let peer = detail["peer"]?.stringValue ?? "?"
            var text = "change by \(who) via \(peer): \(detail["change"]?.stringValue ?? "?") \(detail["outcome"]?.stringValue ?? "?")"
            if let reason = detail["reason"]?.stringValue { text += " (\(reason))" }
            return text
        case "member":
            var text = "member \(detail["member"]?.stringValue ?? "?") \(detail["change"]?.stringValue ?? "?")"
            if let reason = detail["reason"]?.stringValue { text += " (\(reason))" }
            return text
        case "entry":
            return "entry \(detail["entry"]?.stringValue ?? "?") \(detail["change"]?.stringValue ?? "?")"
        case "lagged":
            return "lagged: the node ended this subscription, events since were missed (\(detail["reason"]?.stringValue ?? "?"))"
        default:
            return "\(kind) \(detail.jsonString(.compact))"
        }
    }

    /// UTC ISO 8601 with milliseconds.
    public static func timestamp(_ seconds: Double) -> String {
        var time = time_t(seconds.rounded(.down))
        var parts = tm()
        gmtime_r(&time, &parts)
        let millis = Int((seconds - seconds.rounded(.down)) * 1000)
        func pad(_ value: Int32, _ width: Int) -> String {
            let text = String(value)
            return String(repeating: "0", count: max(0, width - text.count)) + text
        }
        return "\(pad(parts.tm_year + 1900, 4))-\(pad(parts.tm_mon + 1, 2))-\(pad(parts.tm_mday, 2))T"
            + "\(pad(parts.tm_hour, 2)):\(pad(parts.tm_min, 2)):\(pad(parts.tm_sec, 2)).\(pad(Int32(millis), 3))Z"
    }
}
