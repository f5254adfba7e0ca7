import Cordis
import CordisWire

/// The local providers this node shares, per provider life, and the withdrawals in progress: one value
/// that takes what changed (the providers available now, peers linked and lost, acknowledgements,
/// deadlines) and answers with what the node must send and release.
///
/// A provider life is one `provide` (its record's number): providing the service again is a new life,
/// so an acknowledgement always names the withdrawal it is about, and a late one for an earlier life
/// counts for nothing. A peer counts as lost only when its member's life is over (a duplicate link
/// replaced is not a loss). At shutdown every export is withdrawn at once, so slow peers cost one
/// deadline, not one each.
///
/// A provider life's teardown is held from the moment it is shared (`hold`) until its withdrawal ends
/// (`release`): however late the node hears that the provider leaves, the provider's fiber cannot finish
/// unloading before its remote consumers let go of it. A life withdrawn while no member is linked is
/// released at once (`noPeers`).
///
/// Each withdrawal has a deadline, armed when it starts: a withdrawal that ends before it (acknowledged,
/// or its peers lost) cancels it; one that ends by it cancels nothing, and a deadline that passes after
/// its withdrawal ended changes nothing.
struct Exports {
    /// One withdrawal in progress.
    struct Withdrawal: Equatable, Sendable {
        /// Peers that have not acknowledged yet.
        var awaiting: Set<String>
        /// Peers that acknowledged.
        var acknowledged: [String] = []
        /// Peers whose member was lost meanwhile (nothing to wait for).
        var lost: [String] = []
    }

    /// One exported provider life.
    struct Export: Equatable, Sendable {
        /// What the peers were told.
        var announcement: ServiceAnnouncement
        /// The withdrawal in progress, if any.
        var withdrawal: Withdrawal?
    }

    /// How a withdrawal ended.
    enum Outcome: Equatable, Sendable {
        /// Every peer acknowledged or was lost.
        case finished(acknowledged: [String], lost: [String])
        /// The deadline passed with these peers still silent.
        case timedOut(awaiting: [String], acknowledged: [String])
        /// No member was linked when the life left: nobody to wait for.
        case noPeers
    }

    /// What changed.
    enum Event: Equatable, Sendable {
        /// The local provider lives that should be shared now (every other export is withdrawn).
        case available([ServiceAnnouncement])
        /// The provider lives of one service in one realm that should be shared now (every other export of
        /// that service and realm is withdrawn; other services' exports are untouched).
        case slotChanged(service: String, realm: String?, available: [ServiceAnnouncement])
        /// A member was linked: a new life, or a link that replaces the one in use (a standby promoted, or
        /// the other link of a duplicate): withdrawals it has not acknowledged are sent again.
        case peerLinked(String)
        /// A member's life is over.
        case peerLost(String)
        /// A peer acknowledged a withdrawal.
        case acknowledged(ServiceProvider, by: String)
        /// A withdrawal's deadline passed.
        case deadlinePassed(life: Int)
        /// The node is stopping: withdraw everything now, announce nothing more.
        case stopping
    }

    /// What the node must do.
    enum Directive: Equatable, Sendable {
        /// Hold the teardown of the provider from now (it is shared: its withdrawal may have to wait for
        /// the peers) until `release`.
        case hold(ServiceProvider)
        /// Send the announcement to these peers.
        case announce(ServiceAnnouncement, to: [String])
        /// Send `withdraw` to these peers (the provider's teardown is held since `hold`): a withdrawal
        /// beginning (on an event that `beginsWithdrawals`), or sent again to a peer whose link was replaced
        /// before it acknowledged (on `peerLinked`).
        case withdraw(ServiceProvider, peers: [String])
        /// Feed `deadlinePassed(life:)` back once `after` has passed, unless cancelled first.
        case armDeadline(life: Int, after: Duration)
        /// The withdrawal of `life` ended before its deadline: cancel it.
        case cancelDeadline(life: Int)
        /// Let the provider's teardown run (the withdrawal ended), logging the outcome.
        case release(ServiceProvider, Outcome)
    }

    /// How long a withdrawal waits for its peers' acknowledgements.
    let withdrawTimeout: Duration

    /// The exports, by provider life.
    private(set) var exports: [Int: Export] = [:]
    /// The lives of `exports`, by service and realm: a change of one slot looks at that slot's exports
    /// only, so its cost does not grow with the other services' providers. Changed only with `exports`,
    /// by `insert(_:)` and `remove(_:)`.
    private var livesBySlot: [Slot: Set<Int>] = [:]
    /// The lives whose withdrawal is under way. Changed only with the exports' withdrawals, by
    /// `withdraw(_:into:)` and `remove(_:)`.
    private var withdrawing: Set<Int> = []
    /// The linked members.
    private(set) var peers: Set<String> = []
    /// True once the node is stopping.
    private(set) var isStopping = false

    /// Exports whose withdrawals wait at most `withdrawTimeout` for the peers' acknowledgements.
    init(withdrawTimeout: Duration) {
        self.withdrawTimeout = withdrawTimeout
    }

    /// A service in a realm, as announced.
    private struct Slot: Hashable {
        var service: String
        var realm: String?

        init(_ announcement: ServiceAnnouncement) { self.init(service: announcement.service, realm: announcement.realm) }
        init(service: String, realm: String?) {
            self.service = service
            self.realm = realm
        }
    }

    /// Whether the lives by slot and the lives withdrawing are exactly the exports' (checked by the seeded
    /// sequence tests).
    var slotsMatchExports: Bool {
        livesBySlot == Dictionary(grouping: exports.values, by: { Slot($0.announcement) }).mapValues { Set($0.map(\.announcement.life)) }
            && withdrawing == Set(exports.filter { $0.value.withdrawal != nil }.keys)
    }

    /// Whether a withdrawal is in progress.
    var isWithdrawing: Bool { !withdrawing.isEmpty }

    /// Whether any life of `service` in `realm` is exported (announced or being withdrawn).
    func exportsAny(of service: String, in realm: String?) -> Bool {
        livesBySlot[Slot(service: service, realm: realm)] != nil
    }

    /// The export of a life, if any.
    func export(life: Int) -> Export? { exports[life] }

    /// The lives of `service` in `realm` whose withdrawal is under way: their providers still serve
    /// calls (their remote consumers' disposers may call them), in the order the lives began.
    func withdrawingLives(of service: String, in realm: String?) -> [Int] {
        (livesBySlot[Slot(service: service, realm: realm)] ?? []).filter { withdrawing.contains($0) }.sorted()
    }

    /// Whether the providers of a service in `realm` may ever be shared, and how their realm then
    /// travels in announcements: `.some(nil)` for the root realm, `.some(label)` for a shared realm; nil
    /// when none of them is (a service the node cannot serve remotely, `remoteCapable` false, or a
    /// private realm, which never leaves the node). A slot none of whose providers may be shared is never
    /// reconciled: nothing of it was ever exported.
    static func announcedRealm(of realm: Realm, remoteCapable: Bool) -> String?? {
        guard remoteCapable else { return .none }
        if realm.isPrivate { return .none }
        return .some(realm.label)
    }

    /// Whether a provider of a slot whose providers may be shared (`announcedRealm(of:remoteCapable:)`)
    /// is shared with the cluster now: an ordinary provider (not a fallback, which proxies are),
    /// available (its fiber active and its `check` passed), while the node shares its exports at all
    /// (`sharing`: not while its etcd lease has certainly expired).
    static func shares(isFallback: Bool, isAvailable: Bool, sharing: Bool) -> Bool {
        sharing && !isFallback && isAvailable
    }

    /// Takes one event; returns the directives, in order.
    mutating func receive(_ event: Event) -> [Directive] {
        var directives: [Directive] = []
        switch event {
        case .available(let announcements):
            reconcile(announcements, among: exports.keys, into: &directives)
        case .slotChanged(let service, let realm, let announcements):
            let slot = Slot(service: service, realm: realm)
            reconcile(
                announcements.filter { Slot($0) == slot }, among: livesBySlot[slot] ?? [], into: &directives)
        case .peerLinked(let peer):
            peers.insert(peer)
            for life in exports.keys.sorted() {
                guard let export = exports[life] else { continue }
                guard let withdrawal = export.withdrawal else {
                    directives.append(.announce(export.announcement, to: [peer]))
                    continue
                }
                // A withdrawal the peer still owes an acknowledgement (sent while its link was being
                // replaced, or on the link that just closed) goes again on the link that takes over.
                if withdrawal.awaiting.contains(peer) {
                    directives.append(.withdraw(export.announcement.provider, peers: [peer]))
                }
            }
        case .peerLost(let peer):
            peers.remove(peer)
            for life in exports.keys.sorted() {
                guard var withdrawal = exports[life]?.withdrawal, withdrawal.awaiting.remove(peer) != nil else { continue }
                withdrawal.lost.append(peer)
                exports[life]?.withdrawal = withdrawal
                finishIfDone(life, into: &directives)
            }
        case .acknowledged(let provider, let peer):
            guard let life = withdrawingLife(matching: provider),
                  var withdrawal = exports[life]?.withdrawal, withdrawal.awaiting.remove(peer) != nil
            else { break }
            withdrawal.acknowledged.append(peer)
            exports[life]?.withdrawal = withdrawal
            finishIfDone(life, into: &directives)
        case .deadlinePassed(let life):
            guard let export = exports[life], let withdrawal = export.withdrawal else { break }
            remove(life)
            directives.append(.release(
                export.announcement.provider,
                .timedOut(awaiting: withdrawal.awaiting.sorted(), acknowledged: withdrawal.acknowledged.sorted())))
        case .stopping:
            isStopping = true
            for life in exports.keys.sorted() where exports[life]?.withdrawal == nil {
                withdraw(life, into: &directives)
            }
        }
        return directives
    }

    /// Withdraws the exports among `candidates` (lives) that are not in `announcements`, then exports the
    /// new ones.
    private mutating func reconcile(
        _ announcements: [ServiceAnnouncement], among candidates: some Collection<Int>,
        into directives: inout [Directive]
    ) {
        let lives = Set(announcements.map(\.life))
        for life in candidates.sorted() {
            guard let export = exports[life], export.withdrawal == nil, !lives.contains(life) else { continue }
            withdraw(life, into: &directives)
        }
        guard !isStopping else { return }
        for announcement in announcements where exports[announcement.life] == nil {
            insert(Export(announcement: announcement))
            directives.append(.hold(announcement.provider))
            if !peers.isEmpty { directives.append(.announce(announcement, to: peers.sorted())) }
        }
    }

    /// The life being withdrawn that an acknowledgement names, other than those `excluded`. A peer that
    /// predates lives (life 0) names the provider by service, realm and fiber.
    func withdrawingLife(matching provider: ServiceProvider, excluding excluded: Set<Int> = []) -> Int? {
        if provider.life != 0 {
            guard !excluded.contains(provider.life), let export = exports[provider.life], export.withdrawal != nil,
                  export.announcement.provider == provider else { return nil }
            return provider.life
        }
        return exports.sorted { $0.key < $1.key }.first { life, export in
            guard export.withdrawal != nil, !excluded.contains(life) else { return false }
            let announced = export.announcement
            return announced.service == provider.service && announced.realm == provider.realm
                && announced.node == provider.node && announced.fiber == provider.fiber
        }?.key
    }

    private mutating func withdraw(_ life: Int, into directives: inout [Directive]) {
        guard let export = exports[life] else { return }
        guard !peers.isEmpty else {
            remove(life)
            directives.append(.release(export.announcement.provider, .noPeers))
            return
        }
        exports[life]?.withdrawal = Withdrawal(awaiting: peers)
        withdrawing.insert(life)
        directives.append(.withdraw(export.announcement.provider, peers: peers.sorted()))
        directives.append(.armDeadline(life: life, after: withdrawTimeout))
    }

    private mutating func insert(_ export: Export) {
        let life = export.announcement.life
        exports[life] = export
        livesBySlot[Slot(export.announcement), default: []].insert(life)
    }

    private mutating func remove(_ life: Int) {
        guard let export = exports.removeValue(forKey: life) else { return }
        withdrawing.remove(life)
        let slot = Slot(export.announcement)
        livesBySlot[slot]?.remove(life)
        if livesBySlot[slot]?.isEmpty == true { livesBySlot[slot] = nil }
    }

    private mutating func finishIfDone(_ life: Int, into directives: inout [Directive]) {
        guard let export = exports[life], let withdrawal = export.withdrawal, withdrawal.awaiting.isEmpty else { return }
        remove(life)
        directives.append(.cancelDeadline(life: life))
        directives.append(.release(
            export.announcement.provider,
            .finished(acknowledged: withdrawal.acknowledged.sorted(), lost: withdrawal.lost.sorted())))
    }
}

extension Exports.Event {
    /// Whether the event may begin withdrawals (the providers changed, or the node stops); the others only
    /// send again, or end, withdrawals under way.
    var beginsWithdrawals: Bool {
        switch self {
        case .available, .slotChanged, .stopping: true
        case .peerLinked, .peerLost, .acknowledged, .deadlinePassed: false
        }
    }
}
