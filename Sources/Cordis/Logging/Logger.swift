/// A named logger: the error boundary for plugin failures and the way plugins report what they do.
///
/// A value type, safe to use from any thread. `ctx.logger` is named after the nearest
/// `LoggerIntercept` name, else the context's plugin, and takes its level from that intercept.
public struct Logger: Sendable {
    /// The logger's name.
    public let name: String
    /// The logger's level, from the nearest `LoggerIntercept` (nil: `info`): what enters `buffer`, and
    /// what exporters without a level of their own receive.
    public let level: LogLevel?
    let hub: LogHub
    let fiberID: Int?
    /// Fields added to every record, before the ones given to each call.
    public let fields: [(key: String, value: String)]
    /// Adds a destination as an effect of the context the logger came from (nil for a logger made
    /// without a context).
    var addTarget: (@CordisActor @Sendable (LogTarget) throws -> EffectHandle)?

    /// Creates a logger that sends records to `hub`, adding `fields` to every record; `level` is the
    /// logger's own (see `level`).
    public init(
        name: String, hub: LogHub, fiberID: Int? = nil, fields: [(key: String, value: String)] = [],
        level: LogLevel? = nil
    ) {
        self.name = name
        self.hub = hub
        self.fiberID = fiberID
        self.fields = fields
        self.level = level
    }

    /// The same logger under another name (cordis-ios's `named(_:)`; the same as `ctx.logger(name)`).
    public func named(_ name: String) -> Logger {
        var logger = Logger(name: name, hub: hub, fiberID: fiberID, fields: fields, level: level)
        logger.addTarget = addTarget
        return logger
    }

    /// The recent records at or above the level of the logger that logged each, oldest first
    /// (cordis-ios's `buffer`): the part of `ctx.recentLogs` its loggers' levels let in. With
    /// `Context(recentLevel: .info)` and no `LoggerIntercept` level, the two are the same.
    public var buffer: [LogMessage] { hub.recentAtLoggerLevel }

    /// How many recent records the world keeps (`ctx.recentLogs`, and so `buffer`); 1000 by default.
    /// Setting it drops the oldest past the new size at once; 0 keeps none. Shared by every logger of
    /// the world, as in cordis-ios.
    public var bufferSize: Int {
        get { hub.capacity }
        nonmutating set { hub.capacity = newValue }
    }

    /// Adds `exporter` as an effect of the fiber of the context this logger came from (cordis-ios's
    /// `ctx.logger.exporter(…)`): it receives every message at or above its level (the logger's when
    /// nil) on `CordisActor` until that fiber unloads or the handle is disposed. The same as
    /// `ctx.exportLogs(to:)`.
    ///
    /// - Throws: `CordisError` `.inactiveEffect` when the fiber is not loading or active, or when the
    ///   logger was not made by a context (or its context is gone).
    @CordisActor @discardableResult
    public func exporter(_ exporter: any LogExporter) throws -> EffectHandle {
        try add(.exporter(exporter))
    }

    /// Adds `sink` as an effect of the fiber of the context this logger came from: it receives every
    /// record at or above its level, on the logging thread, until that fiber unloads or the handle is
    /// disposed. The same as `ctx.exportLogs(to:)`.
    ///
    /// - Throws: `CordisError` `.inactiveEffect` when the fiber is not loading or active, or when the
    ///   logger was not made by a context (or its context is gone).
    @CordisActor @discardableResult
    public func exporter(_ sink: any LogSink) throws -> EffectHandle {
        try add(.sink(sink))
    }

    @CordisActor private func add(_ target: LogTarget) throws -> EffectHandle {
        guard let addTarget else {
            throw CordisError(.inactiveEffect, "logger \(name) has no context: add exporters with ctx.exportLogs(to:)")
        }
        return try addTarget(target)
    }

    /// Logs at `level` with extra structured fields.
    ///
    /// The message and the fields are evaluated only when something takes `level` (a sink, an exporter
    /// or the buffer of recent records wants it), so a `debug` line nothing takes costs a comparison.
    /// `isolation` is the caller's (leave the default): called on `CordisActor`, exporters receive the
    /// record before this returns.
    public func log(
        _ level: LogLevel, _ message: @autoclosure () -> String,
        fields: @autoclosure () -> [(key: String, value: String)] = [], isolation: (any Actor)? = #isolation
    ) {
        guard hub.takes(level, loggerLevel: self.level) else { return }
        hub.log(
            LogMessage(level: level, name: name, text: message(), fiberID: fiberID, fields: self.fields + fields()),
            loggerLevel: self.level, isolation: isolation)
    }

    /// Logs an error.
    public func error(
        _ message: @autoclosure () -> String, fields: @autoclosure () -> [(key: String, value: String)] = [],
        isolation: (any Actor)? = #isolation
    ) {
        log(.error, message(), fields: fields(), isolation: isolation)
    }
    /// Logs a warning.
    public func warn(
        _ message: @autoclosure () -> String, fields: @autoclosure () -> [(key: String, value: String)] = [],
        isolation: (any Actor)? = #isolation
    ) {
        log(.warn, message(), fields: fields(), isolation: isolation)
    }
    /// Logs information.
    public func info(
        _ message: @autoclosure () -> String, fields: @autoclosure () -> [(key: String, value: String)] = [],
        isolation: (any Actor)? = #isolation
    ) {
        log(.info, message(), fields: fields(), isolation: isolation)
    }
    /// Logs detail.
    public func debug(
        _ message: @autoclosure () -> String, fields: @autoclosure () -> [(key: String, value: String)] = [],
        isolation: (any Actor)? = #isolation
    ) {
        log(.debug, message(), fields: fields(), isolation: isolation)
    }
}

/// A destination a logger or a context adds: a thread-safe sink or a `CordisActor` exporter.
enum LogTarget: Sendable {
    case sink(any LogSink)
    case exporter(any LogExporter)
}
