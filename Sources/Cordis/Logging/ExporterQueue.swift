import Synchronization

/// Brings the records of one `LogExporter` to `CordisActor`, in order: a record logged on the actor is
/// exported at once when nothing waits before it; otherwise it waits in a bounded queue that a task on the
/// actor drains. Thread-safe (guarded by a `Mutex`).
final class ExporterQueue: Sendable {
    /// How many records may wait for one exporter; past it the newest are dropped and counted.
    static let limit = 4096

    private struct State {
        var waiting: [LogMessage] = []
        /// Whether a task on the actor is draining `waiting` (set until it finds it empty).
        var draining = false
        var dropped = 0
        var removed = false
    }

    let exporter: any LogExporter
    private let limit: Int
    private let state = Mutex(State())

    init(_ exporter: any LogExporter, limit: Int = ExporterQueue.limit) {
        self.exporter = exporter
        self.limit = max(1, limit)
    }

    /// Hands `record` to the exporter: now when `onActor` (the caller is on `CordisActor`) and nothing
    /// waits, else through the queue.
    func deliver(_ record: LogMessage, onActor: Bool) {
        enum Step { case now, queued, startDrain, dropped }
        let step: Step = state.withLock { state in
            if state.removed { return .dropped }
            if onActor && !state.draining { return .now }
            guard state.waiting.count < limit else {
                state.dropped += 1
                return .dropped
            }
            state.waiting.append(record)
            if state.draining { return .queued }
            state.draining = true
            return .startDrain
        }
        switch step {
        case .now:
            let exporter = self.exporter
            CordisActor.runAssumingIsolated { exporter.export(record) }
        case .startDrain:
            Task { @CordisActor in self.drain() }
        case .queued, .dropped:
            break
        }
    }

    /// Stops every delivery, including records still waiting.
    func remove() {
        state.withLock { state in
            state.removed = true
            state.waiting = []
        }
    }

    /// Exports what waits, oldest first, until nothing does; then says how many were dropped, if any.
    @CordisActor private func drain() {
        while true {
            let next: (batch: [LogMessage], dropped: Int)? = state.withLock { state in
                guard !state.removed, !state.waiting.isEmpty || state.dropped > 0 else {
                    state.draining = false
                    return nil
                }
                defer { (state.waiting, state.dropped) = ([], 0) }
                return (state.waiting, state.dropped)
            }
            guard let next else { return }
            for record in next.batch {
                guard !isRemoved else { return }
                exporter.export(record)
            }
            if next.dropped > 0, exporter.takes(.warn, loggerLevel: nil), !isRemoved {
                exporter.export(LogMessage(
                    level: .warn, name: LoggerIntercept.name,
                    text: "\(next.dropped) log records were dropped: this exporter fell \(limit) records behind"))
            }
        }
    }

    private var isRemoved: Bool { state.withLock { $0.removed } }
}
