/// The rule that keeps a flood of one kind of log line from flooding the log: per kind, the first
/// `burst` lines of a window are written, the rest are counted, and when the window ends one summary
/// line says how many were left out (`… and 5,120 more in the last 10 s`).
///
/// A value type with time passed in, so the rule is tested without a clock; `LogThrottle` drives it.
struct LogRateLimit: Sendable {
    /// What to do with one line.
    enum Decision: Sendable, Equatable {
        /// Write it.
        case write
        /// Leave it out (it is counted in the window's summary).
        case suppress
    }

    /// A window that ended with lines left out: the summary to write.
    struct Summary: Sendable, Equatable {
        /// The kind of the lines left out.
        var kind: String
        /// How many were left out.
        var count: Int
        /// The window's length, for the text.
        var window: Duration

        /// `… and 5,120 more in the last 10 s`.
        var text: String {
            "… and \(Self.grouped(count)) more in the last \(SettingSyntax.secondsText(window)) s"
        }

        static func grouped(_ value: Int) -> String {
            let digits = Array(String(value))
            var out = ""
            for (index, digit) in digits.enumerated() {
                if index > 0, (digits.count - index) % 3 == 0 { out.append(",") }
                out.append(digit)
            }
            return out
        }
    }

    private struct Window {
        var start: ContinuousClock.Instant
        var written = 0
        var suppressed = 0
    }

    /// The length of a window.
    let window: Duration
    /// Lines of one kind written per window.
    let burst: Int
    /// Kinds tracked at once; past it the oldest windows are summarised early (bounded memory whatever
    /// the kinds are).
    let maxKinds: Int
    private var windows: [String: Window] = [:]

    /// A limit of `burst` lines of a kind per `window`.
    init(window: Duration = .seconds(10), burst: Int = 10, maxKinds: Int = 256) {
        self.window = window
        self.burst = max(1, burst)
        self.maxKinds = max(1, maxKinds)
    }

    /// Whether a line of `kind` at `now` is written; ended windows are summarised first.
    mutating func admit(_ kind: String, at now: ContinuousClock.Instant) -> (Decision, [Summary]) {
        var summaries = expire(at: now)
        if windows[kind] == nil, windows.count >= maxKinds, let oldest = windows.min(by: { $0.value.start < $1.value.start }) {
            windows[oldest.key] = nil
            if oldest.value.suppressed > 0 {
                summaries.append(Summary(kind: oldest.key, count: oldest.value.suppressed, window: window))
            }
        }
        var current = windows[kind] ?? Window(start: now)
        let decision: Decision
        if current.written < burst {
            current.written += 1
            decision = .write
        } else {
            current.suppressed += 1
            decision = .suppress
        }
        windows[kind] = current
        return (decision, summaries)
    }

    /// Ends every window older than `window` at `now`, returning the summaries of those that left lines out.
    mutating func expire(at now: ContinuousClock.Instant) -> [Summary] {
        var summaries: [Summary] = []
        for (kind, current) in windows where now - current.start >= window {
            windows[kind] = nil
            if current.suppressed > 0 {
                summaries.append(Summary(kind: kind, count: current.suppressed, window: window))
            }
        }
        return summaries.sorted { $0.kind < $1.kind }
    }

    /// Whether some window has lines left out (a summary is still to come).
    var hasSuppressed: Bool { windows.values.contains { $0.suppressed > 0 } }
}
