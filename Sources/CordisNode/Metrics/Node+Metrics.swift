import Cordis
import CordisWire

/// The node's metrics, as `/metrics` serves them (rendered by `NodeScrape`).
extension Node {
    /// Serves this node's `/metrics` on the TCP `address` (see `MetricsEndpoint`).
    ///
    /// - Throws: `TransportError` when the address cannot be bound.
    public func serveMetrics(on address: Address) throws -> MetricsEndpoint {
        try MetricsEndpoint(node: self, address: address)
    }

    /// Every family, read on `CordisActor` at the moment of the scrape: fibers by state (every state
    /// present), entries, members by health, links, remote calls by direction and outcome with their
    /// durations, withdrawals with theirs, messages by direction and kind, the etcd lease's state (etcd
    /// mode), and the process's resident memory and open descriptors.
    func metricsText() -> String {
        var fibers: [FiberState: Int] = [:]
        for fiber in context.fibers where fiber.id != context.fiber.id { fibers[fiber.state, default: 0] += 1 }
        let entries = loader.status
        return NodeScrape(
            name: name, incarnation: liveIncarnation, fibers: fibers, entries: entries.count,
            entriesWithError: entries.count { $0.error != nil }, health: Array(memberHealth().values),
            links: state.membership.linkedNames.count, consoleLinks: peers.all.count { $0.role == .console },
            metrics: control.metrics, traffic: traffic.snapshot, leaseState: etcd?.leaseState,
            process: ProcessFigures.read()
        ).text
    }
}