import Cordis
import CordisWire
import Synchronization

/// Writes log lines that an attacker can repeat at will (refused connections, failed handshakes, messages
/// a peer may not send) through a `LogRateLimit`, from any thread, and writes each window's summary when
/// the window ends even if the flood has stopped.
///
/// The state is guarded by a `Mutex`; the trailing summary is written from a timer on the node's event loop.
final class LogThrottle: Sendable {
    private struct State {
        var limit: LogRateLimit
        var flushScheduled = false
    }

    /// The logger it writes to (lines that need no limit are written to it directly).
    let logger: Logger
    private let state: Mutex<State>
    /// The loop whose timers write trailing summaries; attached once it exists (the loop's own observer
    /// writes through this throttle, so the throttle is made first).
    private let timers = Mutex<EventLoop?>(nil)

    /// A throttle writing to `logger`.
    init(logger: Logger, limit: LogRateLimit = LogRateLimit()) {
        self.logger = logger
        self.state = Mutex(State(limit: limit))
    }

    /// Uses `loop`'s timers to write a window's summary when it ends.
    func attach(_ loop: EventLoop) {
        timers.withLock { $0 = loop }
    }

    private var loop: EventLoop? { timers.withLock { $0 } }

    /// Writes `message` at `level` unless lines of `kind` are over their budget for this window.
    func log(
        _ level: LogLevel, kind: String, _ message: String, fields: [(key: String, value: String)] = [],
        now: ContinuousClock.Instant = .now
    ) {
        let (decision, summaries, scheduleIn) = state.withLock { state -> (LogRateLimit.Decision, [LogRateLimit.Summary], Duration?) in
            let (decision, summaries) = state.limit.admit(kind, at: now)
            var scheduleIn: Duration?
            if decision == .suppress, !state.flushScheduled {
                state.flushScheduled = true
                scheduleIn = state.limit.window
            }
            return (decision, summaries, scheduleIn)
        }
        write(summaries, level: level)
        if decision == .write { logger.log(level, message, fields: fields) }
        if let scheduleIn, let loop {
            _ = loop.schedule(after: scheduleIn) { [weak self] in self?.flush(level: level) }
        }
    }

    /// Writes the summaries of windows that have ended.
    func flush(level: LogLevel = .warn, now: ContinuousClock.Instant = .now) {
        let (summaries, again) = state.withLock { state -> ([LogRateLimit.Summary], Duration?) in
            let summaries = state.limit.expire(at: now)
            state.flushScheduled = state.limit.hasSuppressed
            return (summaries, state.flushScheduled ? state.limit.window : nil)
        }
        write(summaries, level: level)
        if let again, let loop {
            _ = loop.schedule(after: again) { [weak self] in self?.flush(level: level) }
        }
    }

    private func write(_ summaries: [LogRateLimit.Summary], level: LogLevel) {
        for summary in summaries {
            logger.log(level, "\(summary.kind): \(summary.text)")
        }
    }
}
