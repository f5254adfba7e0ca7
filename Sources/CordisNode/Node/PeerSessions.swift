import Cordis

/// The node's sessions by id (members' links, in use, standby or drained, and consoles'), the numbering
/// of new ones, and the calls that wait for a link to a member. Which session stands for a
/// member is `NodeState`'s to say; this only keeps the sessions it names.
@CordisActor
struct PeerSessions {
    /// Every open session, by id.
    private(set) var byID: [Int: PeerSession] = [:]
    private var lastID = 0
    /// Calls and relays to a member without a link in use while one is on its way (the replacement of a
    /// link closed as a duplicate, a dial on demand): they wait for it (or the end of the wait, then nil),
    /// by member.
    private var linkWaiters: [String: [CheckedContinuation<PeerSession?, Never>]] = [:]

    /// The session of `id`, while it is open.
    subscript(id: Int) -> PeerSession? { byID[id] }

    /// Every open session, in no particular order (a copy: closing one while iterating is safe).
    var all: [PeerSession] { Array(byID.values) }

    /// Keeps the session `make` creates with the next id, and returns it.
    mutating func open(_ make: (Int) -> PeerSession) -> PeerSession {
        lastID += 1
        let session = make(lastID)
        byID[session.id] = session
        return session
    }

    /// Forgets the session of `id`, returning it if it was open.
    @discardableResult
    mutating func remove(_ id: Int) -> PeerSession? { byID.removeValue(forKey: id) }

    /// Makes `waiter` wait for a link to `member` (resumed by `endLinkWait`).
    mutating func awaitLink(to member: String, _ waiter: CheckedContinuation<PeerSession?, Never>) {
        linkWaiters[member, default: []].append(waiter)
    }

    /// Ends the wait for a link to `member`: every call waiting goes on with `session` (nil: they fail
    /// without a link).
    mutating func endLinkWait(of member: String, with session: PeerSession?) {
        for waiter in linkWaiters.removeValue(forKey: member) ?? [] { waiter.resume(returning: session) }
    }

    /// How many calls wait for a link to `member`.
    func linkWaiters(of member: String) -> Int { linkWaiters[member]?.count ?? 0 }

    /// Whether any call waits for a link.
    var awaitsAnyLink: Bool { !linkWaiters.isEmpty }

    /// Ends every wait for a link with nil (the node stops).
    mutating func endEveryLinkWait() {
        for member in Array(linkWaiters.keys) { endLinkWait(of: member, with: nil) }
    }
}
