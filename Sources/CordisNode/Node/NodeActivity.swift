import Cordis

/// Whether the node runs, and the short work it started that has not ended yet: a console's request, a
/// proxy's disposal, an etcd put or delete, sharing the exports again.
///
/// Each piece of work is held from its start to its end, so none outlives the node: `finish()` (at
/// stop) cancels what is left and waits until it has ended. Work reads cancellation where it waits (a
/// pause on the loop's timers returns early); what it does not read, it finishes.
@CordisActor
final class NodeActivity {
    /// Whether the node runs: between its start and its stop (or its crash, in tests).
    var isRunning = false
    /// The work not ended yet, by the number it started with.
    private var work: [Int: Task<Void, Never>] = [:]
    private var lastID = 0
    /// True once `finish()` returned: work started from then on is cancelled at once.
    private var finished = false

    /// How many pieces of work have not ended yet.
    var pending: Int { work.count }

    /// Starts `body` as a piece of work the node holds until it ends. Work started after `finish()`
    /// began is cancelled and waited for by it as well; work started after it returned (by a callback
    /// that ran late) is cancelled at once, and `abandon()` or another `finish()` covers it.
    func start(_ body: @escaping @CordisActor () async -> Void) {
        lastID += 1
        let id = lastID
        // The task runs after this job: it is listed before it can end and unlist itself.
        let task = Task { [weak self] in
            await body()
            self?.work[id] = nil
        }
        work[id] = task
        if finished { task.cancel() }
    }

    /// Cancels the work not ended yet and waits until every piece has ended, including work started
    /// while it waits.
    func finish() async {
        while !work.isEmpty {
            let left = Array(work.values)
            for task in left { task.cancel() }
            for task in left { await task.value }
        }
        finished = true
    }

    /// Cancels the work not ended yet without waiting for it (a crash, in tests).
    func abandon() {
        for task in work.values { task.cancel() }
    }
}
