import Cordis

/// The journald fields of a log record: the one mapping shared by `JournalLogExporter` and the stderr
/// lines of `NodeStderrLogExporter`, kept pure so it can be tested without journald.
package enum JournalFields {
    /// The default `SYSLOG_IDENTIFIER`.
    package static let defaultIdentifier = "cordis-node"

    /// The fields this mapping sets itself; a record field with one of these names is dropped.
    package static let reservedNames: Set<String> = [
        "MESSAGE", "PRIORITY", "SYSLOG_IDENTIFIER", "CORDIS_NODE", "CORDIS_LOGGER", "CORDIS_FIBER",
    ]

    /// The syslog priority of `level`: error 3, warn 4, info 6, debug 7.
    package static func priority(of level: LogLevel) -> Int {
        switch level {
        case .error: return 3
        case .warn: return 4
        case .info: return 6
        case .debug: return 7
        }
    }

    /// The fields of `record` logged by node `node`, in this order: `MESSAGE` (`logger: message`),
    /// `PRIORITY`, `SYSLOG_IDENTIFIER`, `CORDIS_NODE`, `CORDIS_LOGGER`, `CORDIS_FIBER` (when the record
    /// has a fiber), then the record's own fields in their order (`CORDIS_ENTRY`, `CORDIS_PEER`…).
    ///
    /// Record field names are made valid journald names (see `fieldName(_:)`); one that collides with
    /// `reservedNames` is dropped.
    package static func make(
        record: LogMessage, node: String, identifier: String = defaultIdentifier
    ) -> [(String, String)] {
        var fields: [(String, String)] = [
            ("MESSAGE", "\(record.name): \(record.text)"),
            ("PRIORITY", String(priority(of: record.level))),
            ("SYSLOG_IDENTIFIER", identifier),
            ("CORDIS_NODE", node),
            ("CORDIS_LOGGER", record.name),
        ]
        if let fiber = record.fiberID { fields.append(("CORDIS_FIBER", String(fiber))) }
        for field in record.fields {
            let name = fieldName(field.key)
            guard !reservedNames.contains(name) else { continue }
            fields.append((name, field.value))
        }
        return fields
    }

    /// `key` as a valid journald field name: upper case, with every character other than `A`–`Z`,
    /// `0`–`9` and `_` turned into `_`, prefixed with `CORDIS_` when it would start with `_` or a digit
    /// (or be empty), and cut to 64 characters.
    package static func fieldName(_ key: String) -> String {
        var name = String(
            key.uppercased().unicodeScalars.map { scalar -> Character in
                switch scalar {
                case "A"..."Z", "0"..."9", "_": return Character(scalar)
                default: return "_"
                }
            })
        let startsWell = name.first.map { $0 != "_" && !$0.isNumber } ?? false
        if !startsWell { name = "CORDIS_" + name }
        return String(name.prefix(64))
    }
}
