import FoundationEssentials

extension Logger {
    /// Logs an error value as an error record, its description as the message (cordis-ios's
    /// `logger.error(_:)` taking an `Error`).
    public func error(_ error: any Error, isolation: (any Actor)? = #isolation) {
        log(.error, String(describing: error), isolation: isolation)
    }
}
