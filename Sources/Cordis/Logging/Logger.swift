/// A named logger: the error boundary for plugin failures and the way plugins report what they do.
///
/// A value type, safe to use from any thread.
public struct Logger: Sendable {
    /// The logger's name.
    public let name: String
    let hub: LogHub
    let fiberID: Int?
    /// Fields added to every record, before the ones given to each call.
    public let fields: [(key: String, value: String)]

    /// Creates a logger that sends records to `hub`, adding `fields` to every record.
    public init(name: String, hub: LogHub, fiberID: Int? = nil, fields: [(key: String, value: String)] = []) {
        self.name = name
        self.hub = hub
        self.fiberID = fiberID
        self.fields = fields
    }

    /// Logs at `level` with extra structured fields.
    ///
    /// The message and the fields are evaluated only when the hub takes `level` (an exporter or the
    /// buffer of recent records wants it), so a `debug` line nothing takes costs a comparison.
    public func log(
        _ level: LogLevel, _ message: @autoclosure () -> String,
        fields: @autoclosure () -> [(key: String, value: String)] = []
    ) {
        guard hub.takes(level) else { return }
        hub.log(LogRecord(level: level, name: name, message: message(), fiberID: fiberID, fields: self.fields + fields()))
    }

    /// Logs an error.
    public func error(_ message: @autoclosure () -> String, fields: @autoclosure () -> [(key: String, value: String)] = []) {
        log(.error, message(), fields: fields())
    }
    /// Logs a warning.
    public func warn(_ message: @autoclosure () -> String, fields: @autoclosure () -> [(key: String, value: String)] = []) {
        log(.warn, message(), fields: fields())
    }
    /// Logs information.
    public func info(_ message: @autoclosure () -> String, fields: @autoclosure () -> [(key: String, value: String)] = []) {
        log(.info, message(), fields: fields())
    }
    /// Logs detail.
    public func debug(_ message: @autoclosure () -> String, fields: @autoclosure () -> [(key: String, value: String)] = []) {
        log(.debug, message(), fields: fields())
    }
}
