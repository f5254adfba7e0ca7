import CordisWire
import Synchronization

extension EventLoop {
    /// Suspends for `delay` on this loop's timers; returns early when the task is cancelled. A task that
    /// pauses on a loop is cancelled before the loop stops (a stopped loop fires no timer).
    func pause(for delay: Duration) async {
        let waiter = Mutex<CheckedContinuation<Void, Never>?>(nil)
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                waiter.withLock { $0 = continuation }
                let timer = schedule(after: delay) { waiter.withLock { $0.take() }?.resume() }
                if Task.isCancelled {
                    cancelTimer(timer)
                    waiter.withLock { $0.take() }?.resume()
                }
            }
        } onCancel: {
            waiter.withLock { $0.take() }?.resume()
        }
    }
}
