import Synchronization

/// Where the loggers of one plugin world send records: the sinks and exporters, and a bounded buffer
/// of the most recent records at or above `recentLevel`. Thread-safe (guarded by a `Mutex`).
///
/// A record that neither a sink, an exporter nor the buffer takes is dropped at once: `takes(_:)`
/// answers without a lock, and `Logger` asks it before it builds the record, so a `debug` line costs
/// next to nothing while nothing takes `debug`.
public final class LogHub: Sendable {
    /// A registered sink or exporter, for removal.
    public struct Token: Sendable, Hashable {
        let id: Int
    }

    /// A registered destination.
    private enum Target {
        case sink(any LogSink)
        case exporter(ExporterQueue)
    }

    private struct Kept {
        var record: LogMessage
        /// The level of the logger that logged it (what its `buffer` shows).
        var loggerLevel: LogLevel
    }

    private struct State {
        var targets: [(Token, Target)] = []
        var defaultSink: (any LogSink)?
        var recent: [Kept] = []
        var recentStart = 0
        var capacity: Int
        var sequence = 0
        var nextToken = 0
        var recentLevel: LogLevel

        /// The least severe level the buffer or a destination with a level of its own takes.
        var leastSevereTaken: LogLevel {
            var least = recentLevel
            if targets.isEmpty, let defaultSink { least = max(least, defaultSink.level) }
            for (_, target) in targets {
                switch target {
                case .sink(let sink): least = max(least, sink.level)
                case .exporter(let queue): if let level = queue.exporter.level { least = max(least, level) }
                }
            }
            return least
        }

        /// Whether an exporter takes the level of the logger that logs each record.
        var followsLoggerLevel: Bool {
            targets.contains { if case .exporter(let queue) = $0.1 { queue.exporter.level == nil } else { false } }
        }

        /// The buffered records, oldest first.
        var ordered: [Kept] {
            Array(recent[recentStart...] + recent[..<recentStart])
        }

        /// Keeps `kept` as the newest buffered record, dropping the oldest past `capacity`.
        mutating func keep(_ kept: Kept) {
            guard capacity > 0 else { return }
            if recent.count < capacity {
                recent.append(kept)
            } else {
                recent[recentStart] = kept
                recentStart = (recentStart + 1) % capacity
            }
        }
    }

    private let state: Mutex<State>
    /// `State.leastSevereTaken`'s raw value, kept in step with it, read without the lock.
    private let taken: Atomic<Int>
    /// `State.followsLoggerLevel`, kept in step with it, read without the lock.
    private let followsLogger: Atomic<Bool>

    /// Creates a hub keeping the last `capacity` records at or above `recentLevel` (every record by
    /// default).
    public init(capacity: Int = 1000, recentLevel: LogLevel = .debug) {
        self.state = Mutex(State(capacity: max(0, capacity), recentLevel: recentLevel))
        self.taken = Atomic(recentLevel.rawValue)
        self.followsLogger = Atomic(false)
    }

    /// How many records the buffer keeps (`recent`); lowering it drops the oldest at once.
    public var capacity: Int {
        get { state.withLock { $0.capacity } }
        set {
            state.withLock { state in
                let kept = state.ordered.suffix(max(0, newValue))
                state.capacity = max(0, newValue)
                state.recent = Array(kept)
                state.recentStart = 0
            }
        }
    }

    /// The least severe level the buffer of recent records keeps (`recent`).
    public var recentLevel: LogLevel {
        get { state.withLock { $0.recentLevel } }
        set { change { $0.recentLevel = newValue } }
    }

    /// Whether a record at `level` from a logger at the default level would be kept or exported; false
    /// means `log` would drop it.
    public func takes(_ level: LogLevel) -> Bool {
        takes(level, loggerLevel: nil)
    }

    /// Whether a record at `level` from a logger at `loggerLevel` would be kept or exported.
    func takes(_ level: LogLevel, loggerLevel: LogLevel?) -> Bool {
        level.rawValue <= taken.load(ordering: .relaxed)
            || (followsLogger.load(ordering: .relaxed) && level <= loggerLevel ?? .loggerDefault)
    }

    /// Sets the sink used while no other sink or exporter is registered (stderr by default).
    public func addDefaultExporter(_ sink: (any LogSink)?) {
        change { $0.defaultSink = sink }
    }

    /// Registers a sink. Its `level` is read now and whenever the registrations change.
    public func add(_ sink: any LogSink) -> Token {
        add(.sink(sink))
    }

    /// Registers a `CordisActor` exporter (see `LogExporter` for how records reach it). Its `level` is
    /// read now and whenever the registrations change.
    public func add(_ exporter: any LogExporter) -> Token {
        add(.exporter(ExporterQueue(exporter)))
    }

    private func add(_ target: Target) -> Token {
        change { state in
            state.nextToken += 1
            let token = Token(id: state.nextToken)
            state.targets.append((token, target))
            return token
        }
    }

    /// Removes a sink or an exporter; an exporter receives nothing more, not even records still queued.
    public func remove(_ token: Token) {
        let removed: [Target] = change { state in
            let removed = state.targets.filter { $0.0 == token }.map(\.1)
            state.targets.removeAll { $0.0 == token }
            return removed
        }
        for case .exporter(let queue) in removed { queue.remove() }
    }

    /// Changes the state and brings `taken` and `followsLogger` into step with it, under the lock.
    private func change<T>(_ body: (inout State) -> T) -> T {
        state.withLock { state in
            let result = body(&state)
            taken.store(state.leastSevereTaken.rawValue, ordering: .relaxed)
            followsLogger.store(state.followsLoggerLevel, ordering: .relaxed)
            return result
        }
    }

    /// Records a message from a logger at the default level; see `log(_:loggerLevel:isolation:)`.
    public func log(_ record: LogMessage, isolation: (any Actor)? = #isolation) {
        log(record, loggerLevel: nil, isolation: isolation)
    }

    /// Records a message in the buffer when it is at or above `recentLevel`, and hands it to the sinks
    /// and exporters that take its level (an exporter without a level takes `loggerLevel`, `info` when
    /// nil). `isolation` is the caller's: on `CordisActor`, exporters receive the record before this
    /// returns.
    public func log(_ record: LogMessage, loggerLevel: LogLevel?, isolation: (any Actor)? = #isolation) {
        guard takes(record.level, loggerLevel: loggerLevel) else { return }
        let (stamped, targets): (LogMessage, [Target]) = state.withLock { state in
            state.sequence += 1
            var stamped = record
            stamped.sequence = state.sequence
            if record.level <= state.recentLevel {
                state.keep(Kept(record: stamped, loggerLevel: loggerLevel ?? .loggerDefault))
            }
            var targets = state.targets.map(\.1)
            if targets.isEmpty, let fallback = state.defaultSink { targets = [.sink(fallback)] }
            return (stamped, targets)
        }
        var onActor: Bool?
        for target in targets {
            switch target {
            case .sink(let sink):
                if record.level <= sink.level { sink.export(stamped) }
            case .exporter(let queue):
                guard queue.exporter.takes(record.level, loggerLevel: loggerLevel) else { continue }
                if onActor == nil { onActor = CordisActor.isCurrent(isolation) }
                queue.deliver(stamped, onActor: onActor ?? false)
            }
        }
    }

    /// The buffered records, oldest first.
    public var recent: [LogMessage] {
        state.withLock { $0.ordered.map(\.record) }
    }

    /// The buffered records at or above the level of the logger that logged them, oldest first (what
    /// cordis-ios's `buffer` holds).
    public var recentAtLoggerLevel: [LogMessage] {
        state.withLock { $0.ordered.filter { $0.record.level <= $0.loggerLevel }.map(\.record) }
    }
}
