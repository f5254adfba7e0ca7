import FoundationEssentials

/// cordis-ios's name for a log record: what an exporter receives.
public typealias LogMessage = LogRecord

extension LogRecord {
    /// The message (cordis-ios's `LogMessage.text`).
    public var text: String { message }
    /// When it was logged (cordis-ios's `LogMessage.timestamp`).
    public var timestamp: Date { date }
}

extension Logger {
    /// Logs an error value as an error record, its description as the message (cordis-ios's
    /// `logger.error(_:)` taking an `Error`).
    public func error(_ error: any Error, isolation: (any Actor)? = #isolation) {
        log(.error, String(describing: error), isolation: isolation)
    }
}
