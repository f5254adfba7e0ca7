/// What a node in etcd mode makes of its own lease, as a value: the outcomes of its keepalives and
/// registrations in, what to do out. It owns no clock (each event carries its instant) and no client.
///
/// The rule:
/// - **While the lease may live** (less than one TTL since the last keepalive etcd answered), an
///   unanswered keepalive changes nothing: links keep serving.
/// - **Once a whole TTL passed without an answer**, the lease has expired as far as the node can tell
///   (etcd may still keep it, if it did not run meanwhile): the node is degraded and withdraws its exports
///   (once), since the others may already count it as gone.
/// - **etcd says the lease is gone**: the same, and the node registers again (as a new incarnation).
/// - **A keepalive answered, or a registration made, while degraded**: no longer degraded, and the
///   exports are shared again (after the withdrawal, when there was one).
struct LeaseRule: Equatable, Sendable {
    /// What the keepalive loop reports.
    enum Event: Equatable, Sendable {
        /// etcd answered a keepalive: the lease lives.
        case kept(at: ContinuousClock.Instant)
        /// A keepalive got no answer (etcd unreachable, or it failed otherwise), for `reason`.
        case unanswered(at: ContinuousClock.Instant, reason: String)
        /// etcd answered that the lease does not exist (it expired).
        case leaseNotFound
        /// The node is registered under a new lease (at start, or again after losing one).
        case registered(at: ContinuousClock.Instant)
    }

    /// What the node must do.
    enum Directive: Equatable, Sendable {
        /// Report `degraded` in status, for this reason.
        case degrade(String)
        /// Withdraw the exports from the linked peers, in order.
        case withdrawExports
        /// Register again under a new lease, as a new incarnation.
        case registerAgain
        /// No longer degraded.
        case recover
        /// Share the exports again: announce and publish them (`afterWithdrawal`: once the withdrawal
        /// of `withdrawExports` has been acknowledged).
        case shareAgain(afterWithdrawal: Bool)
    }

    /// The lease's time to live.
    let ttl: Duration
    /// When etcd last confirmed the lease (or the node registered); nil before the first registration.
    private(set) var lastKept: ContinuousClock.Instant?
    /// Why the node is degraded, nil when it is not.
    private(set) var degraded: String?
    /// True while the exports are withdrawn because the lease has certainly expired.
    private(set) var exportsWithdrawn = false

    /// A rule for a lease of `ttl`, confirmed at `now` (nil: not registered yet).
    init(ttl: Duration, now: ContinuousClock.Instant? = nil) {
        self.ttl = ttl
        self.lastKept = now
    }

    /// Takes one event; returns the directives, in order.
    mutating func receive(_ event: Event) -> [Directive] {
        switch event {
        case .kept(let now), .registered(let now):
            lastKept = now
            guard degraded != nil else { return exportsWithdrawn ? share() : [] }
            degraded = nil
            return [.recover] + share()
        case .unanswered(let now, let reason):
            guard let lastKept, now - lastKept > ttl else { return [] }
            return lost("etcd has not answered for longer than the lease (\(reason))")
        case .leaseNotFound:
            return lost("the etcd lease was lost") + [.registerAgain]
        }
    }

    private mutating func lost(_ reason: String) -> [Directive] {
        var directives: [Directive] = []
        if degraded == nil {
            degraded = reason
            directives.append(.degrade(reason))
        }
        if !exportsWithdrawn {
            exportsWithdrawn = true
            directives.append(.withdrawExports)
        }
        return directives
    }

    private mutating func share() -> [Directive] {
        defer { exportsWithdrawn = false }
        return [.shareAgain(afterWithdrawal: exportsWithdrawn)]
    }
}
