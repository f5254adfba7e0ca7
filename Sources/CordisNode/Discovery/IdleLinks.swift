/// Which of a node's links (etcd mode, where links are opened as calls need them) are idle and close,
/// as a value: uses and sweeps in, closes out. It owns no clock (each event carries its instant) and
/// no link; what work a link has in flight only the node sees, so a sweep brings it.
///
/// The rule:
/// - **A call used a member's link**: that instant is its last use.
/// - **At a sweep**, a linked member whose link carried no call for longer than `timeout` and has no
///   work in flight (calls, inbound calls, a console relay, an upstream) closes, once; its last use is
///   forgotten, so a later use starts afresh. A member linked but never used counts as used at the
///   first sweep that sees it, so it is not closed before a whole timeout passed.
/// - **A member's link is gone** (closed, lost): its last use is forgotten.
struct IdleLinks: Equatable, Sendable {
    /// What the node reports.
    enum Event: Equatable, Sendable {
        /// A call used the link to `member` at this instant.
        case used(member: String, at: ContinuousClock.Instant)
        /// The link to `member` is gone.
        case unlinked(member: String)
        /// The periodic sweep at this instant: the members with a link in use (`linked`) and those
        /// whose link has work in flight (`busy`).
        case sweep(at: ContinuousClock.Instant, linked: Set<String>, busy: Set<String>)
    }

    /// What the node must do.
    enum Directive: Equatable, Sendable {
        /// Close the link to `member` as idle.
        case close(member: String)
    }

    /// How long a link may carry no call before it is closed.
    let timeout: Duration

    /// How often the node sweeps: twice per timeout, so an idle link closes between one timeout and one
    /// and a half after its last call.
    var sweepInterval: Duration { timeout / 2 }
    /// When each member's link last carried a call (or was first seen at a sweep).
    private(set) var lastUse: [String: ContinuousClock.Instant] = [:]

    init(timeout: Duration) {
        self.timeout = timeout
    }

    /// Takes one event; returns the directives, in member order.
    mutating func receive(_ event: Event) -> [Directive] {
        switch event {
        case .used(let member, let now):
            lastUse[member] = now
            return []
        case .unlinked(let member):
            lastUse[member] = nil
            return []
        case .sweep(let now, let linked, let busy):
            var directives: [Directive] = []
            for member in linked.sorted() {
                let used = lastUse[member] ?? now
                lastUse[member] = used
                guard now - used > timeout, !busy.contains(member) else { continue }
                lastUse[member] = nil
                directives.append(.close(member: member))
            }
            return directives
        }
    }
}
