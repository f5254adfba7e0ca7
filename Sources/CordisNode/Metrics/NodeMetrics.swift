import Cordis
import CordisWire

/// What a node counts for `/metrics` beside what it already holds: remote calls served and made by
/// outcome with their durations, and orderly withdrawals with theirs. Fed on `CordisActor` by the node
/// (a line at each place a call ends or a withdrawal starts and ends), read by `Node.metricsText()`.
@CordisActor
final class NodeMetrics {
    /// The call duration buckets, in seconds: 0.5 ms to 30 s (the default call timeout).
    static let callBuckets: [Double] = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30]
    /// The withdrawal duration buckets, in seconds: 1 ms to 10 s (past the default 5 s deadline).
    static let withdrawalBuckets: [Double] = [0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]
    /// The call directions: answered by this node, or sent by it to a member's provider.
    static let directions = ["served", "made"]

    /// Calls by direction, then outcome (`ok` or a call error code).
    private(set) var calls: [String: [String: Int]] = ["served": ["ok": 0], "made": ["ok": 0]]
    /// Call durations by direction.
    private(set) var callDurations: [String: MetricsHistogram] = [
        "served": MetricsHistogram(bounds: callBuckets), "made": MetricsHistogram(bounds: callBuckets),
    ]
    /// Withdrawals ended, by outcome: `acknowledged` (every remote consumer let go, or its link was
    /// lost) or `timeout` (the deadline passed first).
    private(set) var withdrawals: [String: Int] = ["acknowledged": 0, "timeout": 0]
    /// How long withdrawals took, from the first notice to the release of the provider's teardown.
    private(set) var withdrawalDuration = MetricsHistogram(bounds: withdrawalBuckets)
    /// The withdrawals under way, by provider life, with when each started.
    private(set) var withdrawing: [Int: ContinuousClock.Instant] = [:]

    init() {}

    /// A call served by this node ended with `reply`, `since` it arrived.
    func served(_ reply: WireMessage, since arrived: ContinuousClock.Instant) {
        let outcome: String = if case .error(let error) = reply { error.code } else { "ok" }
        record("served", outcome, since: arrived)
    }

    /// Runs `call`, a call this node sends to a member's provider, counting how it ended.
    ///
    /// - Throws: what `call` throws.
    func made<T>(_ call: () async throws -> T) async throws -> T {
        let started = ContinuousClock.now
        do {
            let result = try await call()
            record("made", "ok", since: started)
            return result
        } catch let error as RemoteCallError {
            record("made", error.code.rawValue, since: started)
            throw error
        } catch is CancellationError {
            record("made", RemoteCallError.Code.cancelled.rawValue, since: started)
            throw CancellationError()
        } catch {
            record("made", RemoteCallError.Code.failed.rawValue, since: started)
            throw error
        }
    }

    /// The withdrawal of provider life `life` started.
    func withdrawalStarted(life: Int) {
        withdrawing[life] = withdrawing[life] ?? .now
    }

    /// The withdrawal of provider life `life` ended with `outcome`: the provider's teardown was released.
    /// A life that left while no member was linked was withdrawn from nobody: it counts for nothing.
    func withdrawalEnded(life: Int, outcome: Exports.Outcome) {
        guard outcome != .noPeers else { return }
        let timedOut = if case .timedOut = outcome { true } else { false }
        withdrawals[timedOut ? "timeout" : "acknowledged", default: 0] += 1
        if let started = withdrawing.removeValue(forKey: life) {
            withdrawalDuration.observe(Self.seconds(since: started))
        }
    }

    private func record(_ direction: String, _ outcome: String, since started: ContinuousClock.Instant) {
        calls[direction, default: [:]][outcome, default: 0] += 1
        callDurations[direction, default: MetricsHistogram(bounds: Self.callBuckets)].observe(Self.seconds(since: started))
    }

    /// Seconds from `instant` to now.
    static func seconds(since instant: ContinuousClock.Instant) -> Double {
        let elapsed = (ContinuousClock.now - instant).components
        return Double(elapsed.seconds) + Double(elapsed.attoseconds) / 1e18
    }
}
