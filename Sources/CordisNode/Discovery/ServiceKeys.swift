import CordisWire

/// Which service keys a node in etcd mode keeps under its lease: one per provider life it exports and is
/// not withdrawing, none while it stops. What the exports are and what etcd answered come in; the puts
/// and deletes to make go out; it keeps what it believes etcd holds, and owns no client, task or clock.
///
/// Its rules:
/// - **The keys follow the exports**: a life exported gets its key; a life no longer exported, or being
///   withdrawn, loses it.
/// - **One request per key at a time**: each etcd request goes on its own connection, so two requests
///   for one key could land in either order (a put after the delete that should follow it leaves the key
///   behind). A life's next put or delete goes once the one on its way is answered.
/// - **A withdrawal deletes the key first**: the linked peers are told once etcd answered the delete
///   (`tell`), so a consumer elsewhere never finds a key for a provider already going. A delete that etcd
///   does not answer tells them anyway: the peers linked must learn of the withdrawal whether etcd
///   answers or not. While the lease is thought lost (`leaseLost`: etcd silent for a whole TTL) a
///   withdrawal is told at once, and its key deleted when etcd answers.
/// - **A request etcd does not answer is tried again**, after 0.5 s, then twice as long each time up to
///   30 s, until etcd answers or the lease ends. Until then the key may be there or not, and counts as
///   there: a withdrawal deletes it. A key left behind would show the cluster a provider that is gone for
///   as long as the lease lives.
/// - **The keys go with the lease** once it certainly ended (`leaseEnded`: a registration under a new
///   lease): nothing counts as put, and the next reconciliation puts every key again.
struct ServiceKeys: Equatable, Sendable {
    /// What etcd answered, or the node's reasons to look at the keys again.
    enum Event: Equatable, Sendable {
        /// Bring the keys in line with the exports (the node runs and holds a lease).
        case reconcile
        /// The request `attempt` for `life`'s key (a put or a delete) ended: etcd answered (`succeeded`),
        /// or not (it may have been carried out or not).
        case answered(life: Int, attempt: Int, succeeded: Bool)
        /// The delay before trying `life`'s key again passed.
        case retry(life: Int)
        /// etcd did not answer for a whole TTL: the lease is thought lost (it may still live).
        case leaseLost
        /// etcd answers again and the lease lives.
        case leaseKept
        /// The keys went with the lease: the node registered under a new one.
        case leaseEnded
    }

    /// What the node must do in etcd, or tell.
    enum Directive: Equatable, Sendable {
        /// Put `key` for provider `life` (its value says `announcement`) under the lease, then report
        /// `answered(life:attempt:succeeded:)`.
        case put(life: Int, key: String, ServiceAnnouncement, attempt: Int)
        /// Delete `key`, then report `answered(life:attempt:succeeded:)`.
        case delete(life: Int, key: String, attempt: Int)
        /// Report `retry(life:)` once `after` has passed.
        case retry(life: Int, after: Duration)
        /// The withdrawal of `life` may be told to the linked peers now: its key is gone, or etcd did not
        /// answer its delete.
        case tell(life: Int)
    }

    /// What etcd holds for a key, as far as this node knows.
    enum Presence: Equatable, Sendable {
        /// Not there.
        case absent
        /// Put, and etcd said so.
        case present
        /// A request etcd did not answer: there or not (it counts as there).
        case unknown
    }

    /// A request on its way.
    struct Request: Equatable, Sendable {
        /// Its number (its answer names it).
        var attempt: Int
        /// True for a put, false for a delete.
        var puts: Bool
        /// The lease it was made under (`ServiceKeys.leases`): a put under an ended lease puts nothing.
        var lease = 0
    }

    /// One provider life's key.
    struct Entry: Equatable, Sendable {
        /// The key.
        var key: String
        /// What the key should say: the life's announcement while it is exported; nil once it is not.
        var wanted: ServiceAnnouncement?
        /// What etcd holds.
        var presence = Presence.absent
        /// The request on its way.
        var inFlight: Request?
        /// True while waiting to try again after a request etcd did not answer.
        var retryScheduled = false
        /// Requests in a row that etcd did not answer.
        var failures = 0
        /// True while the life's withdrawal waits for the key's delete to tell its peers.
        var tellPending = false

        /// Nothing left to do: not wanted, not there, nothing on its way or to try again.
        var isSettled: Bool { wanted == nil && presence == .absent && inFlight == nil && !retryScheduled && !tellPending }
    }

    /// What `withdrawing(life:)` decided.
    enum Withdrawing: Equatable, Sendable {
        /// Tell the peers now; carry out `directives` (a delete of a key that may be there) beside.
        case tellNow([Directive])
        /// Tell the peers once the key is deleted (`tell`), after carrying out `directives`.
        case deleteFirst([Directive])
    }

    /// The node's name (in every key).
    let node: String
    /// The keys known, by provider life.
    private(set) var entries: [Int: Entry] = [:]
    /// True while the lease is thought lost: withdrawals are told at once.
    private(set) var leaseThoughtLost = false
    /// The number of the last request made.
    private var attempts = 0
    /// How many leases ended (`leaseEnded`): the number of the lease requests are made under now.
    private var leases = 0

    /// How long before the first retry of a request etcd did not answer; it doubles with each failure.
    static let firstRetry = Duration.milliseconds(500)
    /// The longest wait between two attempts.
    static let longestRetry = Duration.seconds(30)

    /// No key put yet.
    init(node: String) {
        self.node = node
    }

    /// The lives whose key counts as put (etcd said so).
    var put: [Int: String] {
        entries.compactMapValues { $0.presence == .present ? $0.key : nil }
    }

    /// Brings the keys in line with `exports`: a key for each life exported and not being withdrawn (none
    /// while the node stops), no other.
    mutating func reconcile(_ exports: Exports) -> [Directive] {
        let wanted = exports.isStopping ? [:] : exports.exports.filter { $0.value.withdrawal == nil }
        var directives: [Directive] = []
        for life in Set(wanted.keys).union(entries.keys).sorted() {
            var entry = entries[life] ?? Entry(key: EtcdDirectory.serviceKey(node: node, life: life))
            entry.wanted = wanted[life]?.announcement
            entries[life] = entry
            advance(life, into: &directives)
        }
        return directives
    }

    /// The withdrawal of `life` begins: its key, if it may be there, is deleted before the peers are told
    /// (at once while the lease is thought lost). A retry waiting is not waited for: the delete goes now.
    mutating func withdrawing(life: Int) -> Withdrawing {
        guard var entry = entries[life] else { return .tellNow([]) }
        entry.wanted = nil
        entry.retryScheduled = false
        let mayBeThere = entry.presence != .absent || entry.inFlight?.puts == true
        entry.tellPending = mayBeThere && !leaseThoughtLost
        entries[life] = entry
        var directives: [Directive] = []
        advance(life, into: &directives)
        return entries[life]?.tellPending == true ? .deleteFirst(directives) : .tellNow(directives)
    }

    /// Takes what etcd answered, or a reason to look again; returns what to do.
    mutating func receive(_ event: Event, exports: Exports) -> [Directive] {
        var directives: [Directive] = []
        switch event {
        case .reconcile:
            // Not while the lease is thought lost: the keys would go under a lease that may be gone.
            guard !leaseThoughtLost else { return [] }
            return reconcile(exports)
        case .answered(let life, let attempt, let succeeded):
            guard var entry = entries[life], let request = entry.inFlight, request.attempt == attempt else { return [] }
            entry.inFlight = nil
            if request.puts, request.lease != leases {
                // Made under a lease that ended since: whatever it did went with that lease.
                entry.presence = .absent
            } else if succeeded {
                entry.presence = request.puts ? .present : .absent
                entry.failures = 0
            } else {
                entry.presence = .unknown
                entry.failures += 1
                entry.retryScheduled = true
                directives.append(.retry(life: life, after: Self.retryDelay(afterFailures: entry.failures)))
            }
            if entry.tellPending, !request.puts {
                // The delete was answered, or etcd does not answer: the peers are told either way.
                entry.tellPending = false
                directives.append(.tell(life: life))
            }
            entries[life] = entry
            advance(life, into: &directives)
        case .retry(let life):
            guard var entry = entries[life], entry.retryScheduled else { return [] }
            entry.retryScheduled = false
            entries[life] = entry
            advance(life, into: &directives)
        case .leaseLost:
            leaseThoughtLost = true
            tellPending(into: &directives)
        case .leaseKept:
            leaseThoughtLost = false
        case .leaseEnded:
            leaseThoughtLost = false
            leases += 1
            tellPending(into: &directives)
            for life in entries.keys.sorted() {
                guard var entry = entries[life] else { continue }
                // Gone with the lease; a request still on its way was made under it, and changes nothing.
                entry.presence = .absent
                entry.failures = 0
                entry.retryScheduled = false
                entries[life] = entry
                if entry.isSettled { entries[life] = nil }
            }
        }
        return directives
    }

    /// How long to wait before trying again after `failures` requests in a row etcd did not answer.
    static func retryDelay(afterFailures failures: Int) -> Duration {
        var delay = firstRetry
        for _ in 1..<max(failures, 1) where delay < longestRetry { delay *= 2 }
        return min(delay, longestRetry)
    }

    /// Tells every withdrawal still waiting for its key's delete.
    private mutating func tellPending(into directives: inout [Directive]) {
        for life in entries.keys.sorted() where entries[life]?.tellPending == true {
            entries[life]?.tellPending = false
            directives.append(.tell(life: life))
        }
    }

    /// Makes the life's next request, unless one is on its way or waits to be tried again: a put when the
    /// key is wanted and not known to be there, a delete when it is not wanted and may be there. A settled
    /// entry is dropped.
    private mutating func advance(_ life: Int, into directives: inout [Directive]) {
        guard var entry = entries[life] else { return }
        guard entry.inFlight == nil, !entry.retryScheduled else { return }
        if let wanted = entry.wanted, entry.presence != .present {
            attempts += 1
            entry.inFlight = Request(attempt: attempts, puts: true, lease: leases)
            directives.append(.put(life: life, key: entry.key, wanted, attempt: attempts))
        } else if entry.wanted == nil, entry.presence != .absent {
            attempts += 1
            entry.inFlight = Request(attempt: attempts, puts: false, lease: leases)
            directives.append(.delete(life: life, key: entry.key, attempt: attempts))
        } else if entry.tellPending, entry.wanted == nil {
            // Nothing was there to delete after all.
            entry.tellPending = false
            directives.append(.tell(life: life))
        }
        entries[life] = entry
        if entry.isSettled { entries[life] = nil }
    }
}
