/// The delays before each retry of something that keeps failing (etcd unreachable, a watch broken):
/// from `first`, doubling up to `maximum`, each drawn with jitter from half to all of the step, so nodes
/// that lost etcd together do not come back in lock step. A success starts again from `first`.
package struct ReconnectBackoff: Sendable {
    /// The first step.
    package let first: Duration
    /// The largest step.
    package let maximum: Duration
    private var step: Duration

    package init(first: Duration = .milliseconds(100), maximum: Duration = .seconds(2)) {
        self.first = first
        self.maximum = max(first, maximum)
        self.step = first
    }

    /// The delay before the next retry, given a random fraction in 0...1 (`Double.random(in: 0...1)`).
    package mutating func next(random fraction: Double) -> Duration {
        let clamped = fraction.isFinite ? min(1, max(0, fraction)) : 1
        let delay = step * (0.5 + clamped / 2)
        step = min(step * 2, maximum)
        return delay
    }

    /// Starts again from `first` (after a success).
    package mutating func reset() {
        step = first
    }
}
