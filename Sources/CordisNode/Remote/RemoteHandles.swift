import Cordis

/// What the node holds to carry out the directives of `Exports` and `Proxies`, by provider life or proxy
/// key: fibers, holds, timers and waiting callers. Handles only: what is exported, withdrawn or proxied
/// is `NodeState`'s to say.
struct RemoteHandles {
    /// The provider record of each exported life.
    var records: [Int: ProviderRecord] = [:]
    /// The hold on the teardown of each provider life shared or being withdrawn (`Exports`' `hold` to
    /// its `release`).
    var holds: [Int: WithdrawalHold] = [:]
    /// The withdrawal deadlines `Exports` armed, on the loop's timers.
    var deadlines = ArmedDeadlines()
    /// Callers waiting until no withdrawal is in progress.
    var waiters: [CheckedContinuation<Void, Never>] = []
    /// The proxy fiber of each proxy, by member life and provider life.
    var proxies: [Proxies.Key: Fiber] = [:]
    /// The listener on the service registry that tells `Exports` when local providers change (kept
    /// while the node runs).
    var registryListener: EffectHandle?
}

/// The withdrawal deadlines armed on the event loop, by provider life. A timer fires on the loop's thread
/// and reaches the actor later; by then its deadline may have been cancelled, or cancelled and armed again
/// for the same life (a withdrawal ended, another began). Each arming has a number of its own, so only the
/// deadline still armed passes: a cancelled deadline never does, as `Exports` is promised.
struct ArmedDeadlines {
    private var armed: [Int: (timer: UInt64, number: Int)] = [:]
    private var lastNumber = 0

    /// Arms the deadline of `life`: `schedule` starts the loop timer that reports the arming's number.
    /// Returns the timer of a deadline of `life` still armed, which this one replaces (to cancel).
    mutating func arm(life: Int, schedule: (_ number: Int) -> UInt64) -> UInt64? {
        lastNumber += 1
        let replaced = armed[life]?.timer
        armed[life] = (schedule(lastNumber), lastNumber)
        return replaced
    }

    /// Disarms the deadline of `life`; returns its loop timer to cancel, nil when none is armed.
    mutating func cancel(life: Int) -> UInt64? {
        armed.removeValue(forKey: life)?.timer
    }

    /// The timer of arming `number` fired: true, and disarmed, when that arming is still the deadline
    /// armed for `life`; false when it was cancelled or replaced meanwhile.
    mutating func fired(life: Int, number: Int) -> Bool {
        guard armed[life]?.number == number else { return false }
        armed[life] = nil
        return true
    }

    /// Whether a deadline is armed for `life`.
    func isArmed(life: Int) -> Bool { armed[life] != nil }
}
