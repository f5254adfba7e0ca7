import Synchronization

/// The faults a cluster's links are under, by pair of nodes (either order): cut or delayed. The relays
/// read it for every chunk they forward; `NodeCluster.cut`, `heal` and `delay` write it.
final class LinkFaults: Sendable {
    /// What happens to the bytes between two nodes.
    enum Rule: Sendable, Equatable {
        /// Nothing crosses either way; the connections stay open (a partition).
        case cut
        /// Every chunk waits this long before it is forwarded.
        case delay(Duration)
    }

    private struct Pair: Hashable {
        let first: String
        let second: String
        init(_ a: String, _ b: String) { (first, second) = a < b ? (a, b) : (b, a) }
    }

    private struct State {
        var rules: [Pair: Rule] = [:]
        /// Bumped at each heal of a pair: a connection cut before it is closed, so both ends see the
        /// partition end as a lost link and dial again.
        var heals: [Pair: Int] = [:]
    }

    private let state = Mutex(State())

    /// The rule between `a` and `b`, nil when their link is sound.
    func rule(_ a: String, _ b: String) -> Rule? { state.withLock { $0.rules[Pair(a, b)] } }

    /// How many times the link between `a` and `b` was healed.
    func heals(_ a: String, _ b: String) -> Int { state.withLock { $0.heals[Pair(a, b)] ?? 0 } }

    /// Puts the link between `a` and `b` under `rule` (nil: sound again; a cut link is healed).
    func set(_ a: String, _ b: String, _ rule: Rule?) {
        state.withLock { state in
            let pair = Pair(a, b)
            if state.rules[pair] == .cut, rule != .cut { state.heals[pair, default: 0] += 1 }
            state.rules[pair] = rule
        }
    }
}
