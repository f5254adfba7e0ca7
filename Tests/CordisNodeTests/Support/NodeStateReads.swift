import Cordis
@testable import CordisNode

/// What in-process tests read of a node's links and proxies: `NodeState`'s account, never the driver's
/// tables.
extension NodeState {
    /// The links of `member` the node holds (in use, standbys, drained duplicates), by session, oldest
    /// first.
    func links(of member: String) -> [Int] {
        admission.holders.filter { $0.value == .member(member) }.keys.sorted()
    }
}

/// The proxies a node holds, and how many it has disposed of: equal before and after a change when the
/// change neither made nor withdrew a proxy.
struct ProxiesSeen: Equatable {
    let live: Set<Proxies.Key>
    let disposalsBegun: Int

    @CordisActor
    init(_ node: Node) {
        live = node.state.proxies.live
        disposalsBegun = node.state.proxies.disposalsBegun
    }
}
