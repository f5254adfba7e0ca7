/// Request timeouts as the control API carries them: seconds in a `Double` (the `timeout` of a
/// request, the console's `--timeout`), turned into a `Duration` only within range, so that no
/// value from a command line or a socket can trap a conversion.
public enum ControlTimeout {
    /// The longest timeout accepted or relayed: 1,000,000 s (about 11.6 days).
    public static let maximumSeconds: Double = 1_000_000
    /// The shortest timeout a node relays with: 50 ms.
    public static let minimumRelaySeconds: Double = 0.05
    /// The timeout when a request names none: 10 s.
    public static let defaultSeconds: Double = 10

    /// A timeout given by a person or a program: positive, finite and at most `maximumSeconds`.
    ///
    /// - Throws: `ControlTimeoutError` naming the problem otherwise.
    public static func parse(_ seconds: Double) throws(ControlTimeoutError) -> Duration {
        guard seconds.isFinite else { throw ControlTimeoutError("must be a finite number of seconds") }
        guard seconds > 0 else { throw ControlTimeoutError("must be more than 0 seconds") }
        guard seconds <= maximumSeconds else {
            throw ControlTimeoutError("must be at most \(Int(maximumSeconds)) seconds")
        }
        return duration(seconds)
    }

    /// A timeout read from a request, for relaying: nil or not a number is the default, and the rest
    /// is clamped to `minimumRelaySeconds ... maximumSeconds`.
    public static func clamped(_ seconds: Double?) -> Duration {
        guard let seconds, !seconds.isNaN else { return duration(defaultSeconds) }
        return duration(min(max(seconds, minimumRelaySeconds), maximumSeconds))
    }

    /// `duration` in seconds, as a request carries it.
    public static func seconds(_ duration: Duration) -> Double {
        let (seconds, attoseconds) = duration.components
        return Double(seconds) + Double(attoseconds) / 1e18
    }

    /// `seconds` (finite, within `0 ... maximumSeconds`) as a duration, to the microsecond.
    private static func duration(_ seconds: Double) -> Duration {
        .microseconds(Int64((seconds * 1_000_000).rounded()))
    }
}

/// A timeout that is out of range.
public struct ControlTimeoutError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What is wrong, to follow the option's name (`--timeout must be …`).
    public let message: String

    init(_ message: String) { self.message = message }

    /// `message`.
    public var description: String { message }
}
