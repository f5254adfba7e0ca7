import Synchronization

/// Where the loggers of one plugin world send records: the exporters, and a bounded buffer of the
/// most recent records. Thread-safe (guarded by a `Mutex`).
public final class LogHub: Sendable {
    /// A registered exporter, for removal.
    public struct Token: Sendable, Hashable {
        let id: Int
    }

    private struct State {
        var exporters: [(Token, any LogExporter)] = []
        var defaultExporter: (any LogExporter)?
        var recent: [LogRecord] = []
        var recentStart = 0
        var sequence = 0
        var nextToken = 0
    }

    /// How many records the buffer keeps.
    public let capacity: Int
    private let state = Mutex(State())

    /// Creates a hub keeping the last `capacity` records.
    public init(capacity: Int = 1000) {
        self.capacity = max(1, capacity)
    }

    /// Sets the exporter used while no other is registered (stderr by default).
    public func addDefaultExporter(_ exporter: (any LogExporter)?) {
        state.withLock { $0.defaultExporter = exporter }
    }

    /// Registers an exporter.
    public func add(_ exporter: any LogExporter) -> Token {
        state.withLock { state in
            state.nextToken += 1
            let token = Token(id: state.nextToken)
            state.exporters.append((token, exporter))
            return token
        }
    }

    /// Removes an exporter.
    public func remove(_ token: Token) {
        state.withLock { $0.exporters.removeAll { $0.0 == token } }
    }

    /// Records a message and hands it to the exporters that take its level.
    public func log(_ record: LogRecord) {
        let (stamped, targets): (LogRecord, [any LogExporter]) = state.withLock { state in
            state.sequence += 1
            var stamped = record
            stamped.sequence = state.sequence
            if state.recent.count < capacity {
                state.recent.append(stamped)
            } else {
                state.recent[state.recentStart] = stamped
                state.recentStart = (state.recentStart + 1) % capacity
            }
            var targets = state.exporters.map(\.1)
            if targets.isEmpty, let fallback = state.defaultExporter { targets = [fallback] }
            return (stamped, targets)
        }
        for exporter in targets where record.level <= exporter.level {
            exporter.export(stamped)
        }
    }

    /// The buffered records, oldest first.
    public var recent: [LogRecord] {
        state.withLock { state in
            Array(state.recent[state.recentStart...] + state.recent[..<state.recentStart])
        }
    }
}
