import FoundationEssentials

/// One log message with its structured fields: what an exporter receives.
public struct LogMessage: Sendable, Hashable {
    /// A number increasing with every message of a hub.
    public var sequence: Int
    /// When it was logged.
    public var timestamp: Date
    /// How severe it is.
    public var level: LogLevel
    /// The logger's name (usually the plugin's).
    public var name: String
    /// The message's text.
    public var text: String
    /// The fiber it concerns, if any.
    public var fiberID: Int?
    /// Extra structured fields (journald fields such as `CORDIS_ENTRY`), in the order given.
    public var fields: [(key: String, value: String)]

    /// Creates a message.
    public init(
        sequence: Int = 0, timestamp: Date = Date(), level: LogLevel, name: String, text: String, fiberID: Int? = nil,
        fields: [(key: String, value: String)] = []
    ) {
        self.sequence = sequence
        self.timestamp = timestamp
        self.level = level
        self.name = name
        self.text = text
        self.fiberID = fiberID
        self.fields = fields
    }

    /// Compares every member, fields in order.
    public static func == (lhs: LogMessage, rhs: LogMessage) -> Bool {
        lhs.sequence == rhs.sequence && lhs.timestamp == rhs.timestamp && lhs.level == rhs.level && lhs.name == rhs.name
            && lhs.text == rhs.text && lhs.fiberID == rhs.fiberID
            && lhs.fields.elementsEqual(rhs.fields) { $0.key == $1.key && $0.value == $1.value }
    }

    /// Hashes the identifying members.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(sequence)
        hasher.combine(text)
    }
}

extension LogMessage {
    /// The earlier name of `text`.
    @available(*, deprecated, renamed: "text")
    public var message: String { text }

    /// The earlier name of `timestamp`.
    @available(*, deprecated, renamed: "timestamp")
    public var date: Date { timestamp }

    /// Creates a message with the earlier names of its members.
    @available(*, deprecated, renamed: "init(sequence:timestamp:level:name:text:fiberID:fields:)")
    public init(
        sequence: Int = 0, date: Date = Date(), level: LogLevel, name: String, message: String, fiberID: Int? = nil,
        fields: [(key: String, value: String)] = []
    ) {
        self.init(sequence: sequence, timestamp: date, level: level, name: name, text: message, fiberID: fiberID, fields: fields)
    }
}

/// The earlier name of `LogMessage`.
@available(*, deprecated, renamed: "LogMessage")
public typealias LogRecord = LogMessage
