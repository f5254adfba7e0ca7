/// How severe a log record is, from `error` (most) to `debug` (least).
public enum LogLevel: Int, Sendable, Hashable, Comparable, CaseIterable, CustomStringConvertible {
    /// Something failed.
    case error = 0
    /// Something is wrong but the node goes on.
    case warn = 1
    /// A normal event worth recording.
    case info = 2
    /// Detail for diagnosis.
    case debug = 3

    /// Whether `lhs` is more severe than `rhs`.
    public static func < (lhs: LogLevel, rhs: LogLevel) -> Bool { lhs.rawValue < rhs.rawValue }

    /// Parses `error`, `warn`, `info` or `debug`.
    public init?(name: String) {
        guard let level = LogLevel.allCases.first(where: { $0.description == name }) else { return nil }
        self = level
    }

    /// The level's name.
    public var description: String {
        switch self {
        case .error: return "error"
        case .warn: return "warn"
        case .info: return "info"
        case .debug: return "debug"
        }
    }
}
