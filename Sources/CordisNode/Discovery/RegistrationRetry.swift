import CordisDiscovery

/// Whether a registration in etcd that failed is tried again, and after how long: only while etcd does
/// not answer (`EtcdError` `unavailable`; not a name another life holds, nor any error etcd answered
/// with), with backoff from 100 ms to 1 s and jitter, until `patience` has passed since the first
/// attempt. A value: the failures and the clock come in, the waits go out.
struct RegistrationRetry: Sendable {
    /// Past this instant a failure is final.
    let deadline: ContinuousClock.Instant
    private var backoff = ReconnectBackoff(first: .milliseconds(100), maximum: .seconds(1))

    /// Retries for `patience` from `start` (none with a patience of zero).
    init(from start: ContinuousClock.Instant, patience: Duration) {
        deadline = start + patience
    }

    /// The wait before the next attempt, after `error` at `now` (`random`: a fraction in 0...1 for the
    /// jitter); nil when the error is final.
    mutating func delay(after error: any Error, at now: ContinuousClock.Instant, random: Double) -> Duration? {
        guard let error = error as? EtcdError, error.code == .unavailable, now < deadline else { return nil }
        return backoff.next(random: random)
    }
}
