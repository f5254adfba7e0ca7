import CordisWire

/// Which service keys a node in etcd mode keeps under its lease: one per provider life it exports and is
/// not withdrawing, none while it stops. What the exports are and what etcd answered come in; the puts
/// and deletes to make go out; it keeps what it put and what it is deleting, and owns no client, task or
/// clock.
///
/// Its rules:
/// - **The keys follow the exports**: a life exported gets its key once; a life no longer exported, or
///   being withdrawn, loses it.
/// - **A withdrawal deletes the key first**: `withdrawing(life:)` starts the delete of the life's key and
///   says the linked peers are told once it ended (`tell`), so a consumer elsewhere never finds a key
///   for a provider already going. A delete that etcd does not answer tells them anyway: the peers linked
///   must learn of the withdrawal whether etcd answers or not.
/// - **A failed delete is tried again**, after 0.5 s, then twice as long each time up to 30 s, until
///   etcd answers or the lease ends: a key left behind would show the cluster a provider that is gone,
///   for as long as the lease lives.
/// - **No put of a key while its delete is under way**: each request goes on its own connection, so a put
///   could reach etcd before the delete and be deleted by it. The life's key is put once the delete ended.
/// - **A failed put is put again** at the next reconciliation (unless a newer key replaced it).
/// - **The keys go with the lease**: after the lease expired, or a registration under a new lease, nothing
///   counts as put, and the next reconciliation puts every key again (a delete still on its way is waited
///   for first, as above; one waiting to be tried again is dropped).
struct ServiceKeys: Equatable, Sendable {
    /// What etcd answered, or the node's reasons to look at the keys again.
    enum Event: Equatable, Sendable {
        /// Bring the keys in line with the exports (the node runs and holds a lease).
        case reconcile
        /// The put of `key` for `life` failed: the key is not there.
        case putFailed(life: Int, key: String)
        /// The delete `attempt` of `life`'s key ended: etcd answered (`succeeded`), or not.
        case deleted(life: Int, attempt: Int, succeeded: Bool)
        /// The delay before trying `life`'s delete again passed.
        case retryDelete(life: Int)
        /// The keys went with the lease (it expired, or the node registered under a new one).
        case leaseEnded
    }

    /// What the node must do in etcd, or tell.
    enum Directive: Equatable, Sendable {
        /// Put `key` for provider `life` (its value says `announcement`) under the lease.
        case put(life: Int, key: String, ServiceAnnouncement)
        /// Delete `key`, then report `deleted(life:attempt:succeeded:)`.
        case delete(life: Int, key: String, attempt: Int)
        /// Report `retryDelete(life:)` once `after` has passed.
        case retry(life: Int, after: Duration)
        /// The withdrawal of `life` may be told to the linked peers now: its key is gone, or etcd did not
        /// answer its delete.
        case tell(life: Int)
    }

    /// A key being deleted.
    struct Deletion: Equatable, Sendable {
        /// The key.
        var key: String
        /// The attempt under way or last made (its answer is the one that counts).
        var attempt: Int
        /// True while a delete request is on its way; false while waiting to try again.
        var inFlight = true
        /// True while the life's withdrawal waits for this delete to tell its peers.
        var tellPending: Bool
        /// Attempts that failed.
        var failures = 0
        /// True when the lease ended meanwhile (the key went with it): the answer ends the deletion,
        /// whatever it says.
        var obsolete = false
    }

    /// What `withdrawing(life:)` decided.
    enum Withdrawing: Equatable, Sendable {
        /// No key is there: tell the peers now.
        case tellNow
        /// Tell the peers once the key is deleted (`tell`), after carrying out this delete if any (nil
        /// when one was already on its way).
        case deleteFirst(Directive?)
    }

    /// The node's name (in every key).
    let node: String
    /// The key put for each provider life.
    private(set) var put: [Int: String] = [:]
    /// The keys being deleted, by provider life.
    private(set) var deleting: [Int: Deletion] = [:]
    /// The number of the last delete attempt made.
    private var attempts = 0

    /// How long before the first retry of a failed delete; it doubles with each failure.
    static let firstRetry = Duration.milliseconds(500)
    /// The longest wait between two attempts of a delete.
    static let longestRetry = Duration.seconds(30)

    /// No key put yet.
    init(node: String) {
        self.node = node
    }

    /// Brings the keys in line with `exports`: a key for each life exported and not being withdrawn (none
    /// while the node stops), no other; a life whose key is being deleted waits for the delete to end.
    mutating func reconcile(_ exports: Exports) -> [Directive] {
        var directives: [Directive] = []
        let wanted = exports.isStopping ? [:] : exports.exports.filter { $0.value.withdrawal == nil }
        for (life, export) in wanted.sorted(by: { $0.key < $1.key }) where put[life] == nil && deleting[life] == nil {
            let key = EtcdDirectory.serviceKey(node: node, life: life)
            put[life] = key
            directives.append(.put(life: life, key: key, export.announcement))
        }
        for (life, key) in put.sorted(by: { $0.key < $1.key }) where wanted[life] == nil {
            put[life] = nil
            directives.append(startDeleting(life, key: key, tellPending: false))
        }
        return directives
    }

    /// The withdrawal of `life` begins: its key, if put, is deleted before the peers are told.
    mutating func withdrawing(life: Int) -> Withdrawing {
        if let key = put.removeValue(forKey: life) {
            return .deleteFirst(startDeleting(life, key: key, tellPending: true))
        }
        if var deletion = deleting[life], deletion.inFlight, !deletion.obsolete {
            // A delete of the life's earlier key is on its way: the peers hear of the withdrawal after it.
            deletion.tellPending = true
            deleting[life] = deletion
            return .deleteFirst(nil)
        }
        return .tellNow
    }

    /// Takes what etcd answered, or a reason to look again; returns what to do.
    mutating func receive(_ event: Event, exports: Exports) -> [Directive] {
        switch event {
        case .reconcile:
            return reconcile(exports)
        case .putFailed(let life, let key):
            if put[life] == key { put[life] = nil }
            return []
        case .deleted(let life, let attempt, let succeeded):
            guard var deletion = deleting[life], deletion.attempt == attempt, deletion.inFlight else { return [] }
            var directives: [Directive] = []
            if deletion.tellPending {
                deletion.tellPending = false
                directives.append(.tell(life: life))
            }
            if succeeded || deletion.obsolete {
                deleting[life] = nil
                // The life may be exported again meanwhile: its key goes back now.
                return directives + reconcile(exports)
            }
            deletion.failures += 1
            deletion.inFlight = false
            deleting[life] = deletion
            directives.append(.retry(life: life, after: Self.retryDelay(afterFailures: deletion.failures)))
            return directives
        case .retryDelete(let life):
            guard var deletion = deleting[life], !deletion.inFlight else { return [] }
            attempts += 1
            deletion.attempt = attempts
            deletion.inFlight = true
            deleting[life] = deletion
            return [.delete(life: life, key: deletion.key, attempt: attempts)]
        case .leaseEnded:
            put.removeAll()
            var directives: [Directive] = []
            for life in deleting.keys.sorted() {
                guard var deletion = deleting[life] else { continue }
                // The key went with the lease: a withdrawal waiting for it is told now.
                if deletion.tellPending { directives.append(.tell(life: life)) }
                guard deletion.inFlight else {
                    deleting[life] = nil
                    continue
                }
                deletion.tellPending = false
                deletion.obsolete = true
                deleting[life] = deletion
            }
            return directives
        }
    }

    /// How long to wait before trying a delete again after `failures` failed attempts.
    static func retryDelay(afterFailures failures: Int) -> Duration {
        var delay = firstRetry
        for _ in 1..<max(failures, 1) where delay < longestRetry { delay *= 2 }
        return min(delay, longestRetry)
    }

    private mutating func startDeleting(_ life: Int, key: String, tellPending: Bool) -> Directive {
        attempts += 1
        deleting[life] = Deletion(key: key, attempt: attempts, tellPending: tellPending)
        return .delete(life: life, key: key, attempt: attempts)
    }
}
