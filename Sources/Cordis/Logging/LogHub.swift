import Synchronization

/// Where the loggers of one plugin world send records: the exporters, and a bounded buffer of the
/// most recent records at or above `recentLevel`. Thread-safe (guarded by a `Mutex`).
///
/// A record that neither an exporter nor the buffer takes is dropped at once: `takes(_:)` answers
/// without a lock, and `Logger` asks it before it builds the record, so a `debug` line costs next
/// to nothing while nothing takes `debug`.
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
        var recentLevel: LogLevel

        /// The least severe level the buffer or an exporter that receives records takes.
        var leastSevereTaken: LogLevel {
            let exporting = exporters.isEmpty ? defaultExporter.map { [$0] } ?? [] : exporters.map(\.1)
            return exporting.reduce(recentLevel) { max($0, $1.level) }
        }
    }

    /// How many records the buffer keeps.
    public let capacity: Int
    private let state: Mutex<State>
    /// `State.leastSevereTaken`'s raw value, kept in step with it, read without the lock.
    private let taken: Atomic<Int>

    /// Creates a hub keeping the last `capacity` records at or above `recentLevel` (every record by
    /// default).
    public init(capacity: Int = 1000, recentLevel: LogLevel = .debug) {
        self.capacity = max(1, capacity)
        self.state = Mutex(State(recentLevel: recentLevel))
        self.taken = Atomic(recentLevel.rawValue)
    }

    /// The least severe level the buffer of recent records keeps (`recent`).
    public var recentLevel: LogLevel {
        get { state.withLock { $0.recentLevel } }
        set { change { $0.recentLevel = newValue } }
    }

    /// Whether a record at `level` would be kept or exported; false means `log` would drop it.
    public func takes(_ level: LogLevel) -> Bool {
        level.rawValue <= taken.load(ordering: .relaxed)
    }

    /// Sets the exporter used while no other is registered (stderr by default).
    public func addDefaultExporter(_ exporter: (any LogExporter)?) {
        change { $0.defaultExporter = exporter }
    }

    /// Registers an exporter. Its `level` is read now and whenever exporters change.
    public func add(_ exporter: any LogExporter) -> Token {
        change { state in
            state.nextToken += 1
            let token = Token(id: state.nextToken)
            state.exporters.append((token, exporter))
            return token
        }
    }

    /// Removes an exporter.
    public func remove(_ token: Token) {
        change { $0.exporters.removeAll { $0.0 == token } }
    }

    /// Changes the state and brings `taken` into step with it, under the lock.
    private func change<T>(_ body: (inout State) -> T) -> T {
        state.withLock { state in
            let result = body(&state)
            taken.store(state.leastSevereTaken.rawValue, ordering: .relaxed)
            return result
        }
    }

    /// Records a message in the buffer when it is at or above `recentLevel`, and hands it to the
    /// exporters that take its level.
    public func log(_ record: LogRecord) {
        guard takes(record.level) else { return }
        let (stamped, targets): (LogRecord, [any LogExporter]) = state.withLock { state in
            state.sequence += 1
            var stamped = record
            stamped.sequence = state.sequence
            if record.level <= state.recentLevel {
                if state.recent.count < capacity {
                    state.recent.append(stamped)
                } else {
                    state.recent[state.recentStart] = stamped
                    state.recentStart = (state.recentStart + 1) % capacity
                }
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
