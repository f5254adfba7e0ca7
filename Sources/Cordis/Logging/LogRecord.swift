import FoundationEssentials

/// One log message with its structured fields.
public struct LogRecord: Sendable, Hashable {
    /// A number increasing with every record of a hub.
    public var sequence: Int
    /// When it was logged.
    public var date: Date
    /// How severe it is.
    public var level: LogLevel
    /// The logger's name (usually the plugin's).
    public var name: String
    /// The message.
    public var message: String
    /// The fiber it concerns, if any.
    public var fiberID: Int?
    /// Extra structured fields (journald fields such as `CORDIS_ENTRY`), in the order given.
    public var fields: [(key: String, value: String)]

    /// Creates a record.
    public init(
        sequence: Int = 0, date: Date = Date(), level: LogLevel, name: String, message: String, fiberID: Int? = nil,
        fields: [(key: String, value: String)] = []
    ) {
        self.sequence = sequence
        self.date = date
        self.level = level
        self.name = name
        self.message = message
        self.fiberID = fiberID
        self.fields = fields
    }

    /// Compares every member, fields in order.
    public static func == (lhs: LogRecord, rhs: LogRecord) -> Bool {
        lhs.sequence == rhs.sequence && lhs.date == rhs.date && lhs.level == rhs.level && lhs.name == rhs.name
            && lhs.message == rhs.message && lhs.fiberID == rhs.fiberID
            && lhs.fields.elementsEqual(rhs.fields) { $0.key == $1.key && $0.value == $1.value }
    }

    /// Hashes the identifying members.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(sequence)
        hasher.combine(message)
    }
}
