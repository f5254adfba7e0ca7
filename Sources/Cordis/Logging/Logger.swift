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
    /// Adds an exporter as an effect of the context the logger came from (nil for a logger made
    /// without a context).
    var addExporter: (@CordisActor @Sendable (any LogExporter) throws -> EffectHandle)?

    /// Creates a logger that sends records to `hub`, adding `fields` to every record.
    public init(name: String, hub: LogHub, fiberID: Int? = nil, fields: [(key: String, value: String)] = []) {
        self.name = name
        self.hub = hub
        self.fiberID = fiberID
        self.fields = fields
    }

    /// Adds `exporter` as an effect of the fiber of the context this logger came from (cordis-ios's
    /// `ctx.logger.exporter(…)`): it receives every record at or above its level until that fiber
    /// unloads or the handle is disposed. The same as `ctx.exportLogs(to:)`.
    ///
    /// - Throws: `CordisError` `.inactiveScope` when the fiber is not loading or active, or when the
    ///   logger was not made by a context (or its context is gone).
    @CordisActor @discardableResult
    public func exporter(_ exporter: any LogExporter) throws -> EffectHandle {
        guard let addExporter else {
            throw CordisError(.inactiveScope, "logger \(name) has no context: add exporters with ctx.exportLogs(to:)")
        }
        return try addExporter(exporter)
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
