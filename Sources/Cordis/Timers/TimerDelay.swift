/// Checks the durations given to the timers: what cannot be waited for is a `CordisError` naming the
/// plugin, never a trap.
enum TimerDelay {
    /// The longest delay a timer takes: 10^9 seconds (about 31 years), far below what the clocks can
    /// represent.
    static let longest = Duration.seconds(1_000_000_000)

    /// `delay` when a timer can wait for it: not negative, not above `longest`, and (when `positive`)
    /// greater than zero.
    ///
    /// - Throws: `CordisError` `.invalidDuration` naming `timer` and `plugin`.
    static func checked(_ delay: Duration, timer: String, plugin: String, positive: Bool = false) throws -> Duration {
        if delay < .zero {
            throw invalid(timer, plugin, "is negative (\(delay))")
        }
        if positive && delay == .zero {
            throw invalid(timer, plugin, "must be greater than zero")
        }
        if delay > longest {
            throw invalid(timer, plugin, "is too long (\(delay)); the longest is 1000000000 seconds")
        }
        return delay
    }

    /// The duration of `seconds`, checked as above; a value that is not finite (NaN, ±infinity) is an
    /// error too.
    static func checked(seconds: Double, timer: String, plugin: String, positive: Bool = false) throws -> Duration {
        guard seconds.isFinite else {
            throw invalid(timer, plugin, "is not a finite number of seconds (\(seconds))")
        }
        if seconds < 0 {
            throw invalid(timer, plugin, "is negative (\(seconds) seconds)")
        }
        guard seconds <= 1_000_000_000 else {
            throw invalid(timer, plugin, "is too long (\(seconds) seconds); the longest is 1000000000 seconds")
        }
        return try checked(.seconds(seconds), timer: timer, plugin: plugin, positive: positive)
    }

    private static func invalid(_ timer: String, _ plugin: String, _ problem: String) -> CordisError {
        CordisError(.invalidDuration, "\(timer) of plugin \(plugin): the delay \(problem)")
    }
}
