import CordisDiscovery

/// Which dials the node makes, and when. There are two kinds:
/// - **Kept addresses** (the embedded mesh: its seeds, and the members' addresses the gossip keeps
///   dialled). An address is dialled while no link to the member at it is in use. A dial that fails, or
///   whose link this node refuses (not admitted, a name conflict), is tried again after a backoff: it
///   doubles from the configured first step to its maximum, jittered. A dial whose link is kept resets
///   the backoff. While a link to the member at the address is in use, whoever dialled it, the address
///   waits; when that link ends, it is dialled again at once.
/// - **Links opened on demand** (etcd mode: a call or a relay to a member without a link, and the
///   directory's re-dial of a member whose link failed). There is at most one dial per member at a time,
///   trying its addresses in the order etcd lists them. A dial that reaches another node is closed and
///   the next address tried. It ends when a link is kept or no address is left. A re-dial that ends
///   without a link is reported, so the directory decides the next one.
///
/// Every dial has an attempt number. A report about an attempt the machine no longer waits for (its
/// address stopped being dialled, a newer dial replaced it) counts for nothing.
///
/// It knows no links: `NodeState` tells it whether a link to the member at an address is in use.
struct Dials: Sendable {
    /// What happens to the dials.
    enum Event: Equatable, Sendable {
        /// Keep `address` dialled; `linked`: a link to the member at it is in use now.
        case keep(address: String, linked: Bool)
        /// Stop dialling `address`.
        case stop(address: String)
        /// The backoff after attempt `attempt` at `address` is over; `linked` as for `keep`.
        case due(address: String, attempt: Int, linked: Bool)
        /// The link in use to the member at `address` ended, and no other is in use there (`NodeState`
        /// says so only of an address that waits).
        case unlinked(address: String)
        /// Open a link to `member` at `addresses`, in order (a call needs one, or the directory re-dials it
        /// when `redial`).
        case open(member: String, addresses: [String], redial: Bool)
        /// The directory asks to re-dial `member` after `delay`, in place of a re-dial not made yet.
        case redial(member: String, after: Duration)
        /// The re-dial of `member` numbered `token` is due: it dials `addresses` unless a link to the member
        /// is in use or on its way (`linked`). A token replaced since counts for nothing.
        case redialDue(member: String, token: Int, addresses: [String], linked: Bool)
        /// Attempt `attempt`'s handshake named `member`.
        case reached(attempt: Int, member: String)
        /// Attempt `attempt` ended: its link was kept for its member (`kept`), or it failed or was refused;
        /// `linked` as for `keep`, of the attempt's address; `random` in 0...1 for the jitter.
        case ended(attempt: Int, kept: Bool, linked: Bool, random: Double)
    }

    /// What the node must do.
    enum Directive: Equatable, Sendable {
        /// Dial `address` once, as attempt `attempt`; report `reached` once its handshake names the peer,
        /// then `ended`.
        case connect(attempt: Int, address: String)
        /// Report `due` of attempt `attempt` at `address` after `delay` (its backoff).
        case backOff(address: String, attempt: Int, after: Duration)
        /// Report `redialDue` of `member` with `token` after `delay`.
        case redialLater(member: String, token: Int, after: Duration)
        /// Take the link of attempt `attempt` (its handshake is done) to the node's links.
        case adopt(attempt: Int)
        /// Close the link of attempt `attempt`, for `reason`, without taking it.
        case discard(attempt: Int, reason: String)
        /// The dial of `member` on demand ended (with a link or none): what waited for it goes on.
        case opened(member: String)
        /// A re-dial of `member` ended without a link (the directory decides the next one).
        case redialFailed(member: String, random: Double)
    }

    /// Where a kept address stands.
    enum Phase: Equatable, Sendable {
        /// A dial is on its way.
        case dialling
        /// Waiting for the backoff to pass.
        case backingOff
        /// A link to the member at the address is in use: dialled again once it ends.
        case waiting
        /// No longer kept, but its dial is on its way: forgotten once that ends (its link is not taken). Kept
        /// again meanwhile, it goes on with that dial: there is never more than one dial of an address.
        case stopping
    }

    /// A kept address.
    struct Kept: Sendable {
        var phase: Phase
        /// The attempt of the dial on its way, or of the last one.
        var attempt: Int
        var backoff: ReconnectBackoff
    }

    /// A dial on demand.
    struct Opening: Equatable, Sendable {
        /// The addresses still to try, in order.
        var addresses: [String]
        /// The attempt on its way.
        var attempt: Int
        /// Whether a failure is reported as a failed re-dial.
        var redial: Bool
    }

    /// The kept addresses, by address.
    private(set) var kept: [String: Kept] = [:]
    /// The dials on demand, by member.
    private(set) var opening: [String: Opening] = [:]
    /// The re-dial to make of each member, by its token.
    private(set) var redials: [String: Int] = [:]
    /// The last attempt (and re-dial token) number given.
    private(set) var lastAttempt = 0
    /// The backoff of a kept address: its first step and its largest.
    let backoff: (first: Duration, maximum: Duration)

    /// No dials yet; a kept address backs off from `backoff.first` to `backoff.maximum`.
    init(backoff: (first: Duration, maximum: Duration) = (.milliseconds(50), .seconds(2))) {
        self.backoff = backoff
    }

    /// The kept addresses that wait for a link to end.
    var waiting: [String] { kept.filter { $0.value.phase == .waiting }.keys.sorted() }

    /// The kept address attempt `attempt` dials, while it is on its way.
    func keptAddress(of attempt: Int) -> String? {
        kept.first { $0.value.phase == .dialling && $0.value.attempt == attempt }?.key
    }

    /// Whether a dial of `member` on demand is on its way.
    func isOpening(_ member: String) -> Bool { opening[member] != nil }

    /// Takes one event; returns the directives, in order.
    mutating func receive(_ event: Event) -> [Directive] {
        switch event {
        case .keep(let address, let linked):
            if kept[address]?.phase == .stopping {
                kept[address]?.phase = .dialling
                return []
            }
            guard kept[address] == nil else { return [] }
            kept[address] = Kept(
                phase: .waiting, attempt: 0, backoff: ReconnectBackoff(first: backoff.first, maximum: backoff.maximum))
            return dialUnlessLinked(address, linked: linked)
        case .stop(let address):
            if kept[address]?.phase == .dialling {
                kept[address]?.phase = .stopping
            } else {
                kept[address] = nil
            }
            return []
        case .due(let address, let attempt, let linked):
            guard let entry = kept[address], entry.phase == .backingOff, entry.attempt == attempt else { return [] }
            return dialUnlessLinked(address, linked: linked)
        case .unlinked(let address):
            guard kept[address]?.phase == .waiting else { return [] }
            return dialUnlessLinked(address, linked: false)
        case .open(let member, let addresses, let redial):
            if opening[member] != nil {
                if redial { opening[member]?.redial = true }
                return []
            }
            return dialNext(member, Opening(addresses: addresses, attempt: 0, redial: redial), random: 0)
        case .redial(let member, let delay):
            lastAttempt += 1
            redials[member] = lastAttempt
            return [.redialLater(member: member, token: lastAttempt, after: delay)]
        case .redialDue(let member, let token, let addresses, let linked):
            guard redials[member] == token else { return [] }
            redials[member] = nil
            return linked ? [] : receive(.open(member: member, addresses: addresses, redial: true))
        case .reached(let attempt, let reached):
            if let (member, _) = opening.first(where: { $0.value.attempt == attempt }), member != reached {
                return [.discard(attempt: attempt, reason: "dialled \(member) and reached \(reached)")]
            }
            guard isCurrent(attempt) else { return [.discard(attempt: attempt, reason: "stopped dialling")] }
            return [.adopt(attempt: attempt)]
        case .ended(let attempt, let kept, let linked, let random):
            if let (member, dial) = opening.first(where: { $0.value.attempt == attempt }) {
                guard !kept else {
                    opening[member] = nil
                    return [.opened(member: member)]
                }
                return dialNext(member, dial, random: random)
            }
            guard let (address, entry) = self.kept.first(where: { $0.value.attempt == attempt && $0.value.phase.dials })
            else { return [] }
            if entry.phase == .stopping {
                self.kept[address] = nil
                return []
            }
            if kept {
                self.kept[address]?.backoff.reset()
                return dialUnlessLinked(address, linked: linked)
            }
            var backoff = entry.backoff
            let delay = backoff.next(random: random)
            self.kept[address] = Kept(phase: .backingOff, attempt: attempt, backoff: backoff)
            return [.backOff(address: address, attempt: attempt, after: delay)]
        }
    }

    /// Whether attempt `attempt` is one the machine waits for.
    private func isCurrent(_ attempt: Int) -> Bool {
        kept.values.contains { $0.phase == .dialling && $0.attempt == attempt }
            || opening.values.contains { $0.attempt == attempt }
    }

    /// Dials the kept `address` now, unless a link to the member at it is in use (it then waits).
    private mutating func dialUnlessLinked(_ address: String, linked: Bool) -> [Directive] {
        guard !linked else {
            kept[address]?.phase = .waiting
            return []
        }
        lastAttempt += 1
        kept[address]?.phase = .dialling
        kept[address]?.attempt = lastAttempt
        return [.connect(attempt: lastAttempt, address: address)]
    }

    /// Dials `member`'s next address, or ends its dial when none is left.
    private mutating func dialNext(_ member: String, _ dial: Opening, random: Double) -> [Directive] {
        var dial = dial
        guard !dial.addresses.isEmpty else {
            opening[member] = nil
            return dial.redial ? [.opened(member: member), .redialFailed(member: member, random: random)] : [.opened(member: member)]
        }
        lastAttempt += 1
        dial.attempt = lastAttempt
        let address = dial.addresses.removeFirst()
        opening[member] = dial
        return [.connect(attempt: lastAttempt, address: address)]
    }
}

extension Dials.Phase {
    /// Whether a dial of the address is on its way.
    var dials: Bool { self == .dialling || self == .stopping }
}
