import Cordis

/// The node's sessions by id (members' links, in use, standby or drained, and consoles'), the numbering
/// of new ones, and the calls that wait for a member's replacement link. Which session stands for a
/// member is `NodeState`'s to say; this only keeps the sessions it names.
@CordisActor
struct PeerSessions {
    /// Every open session, by id.
    private(set) var byID: [Int: PeerSession] = [:]
    private var lastID = 0
    /// Calls to a member whose link in use was closed as a duplicate before its other link was up: they
    /// wait for that link (or the end of the wait, then nil), by member.
    private var replacementWaiters: [String: [CheckedContinuation<PeerSession?, Never>]] = [:]

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

    /// Makes `waiter` wait for `member`'s replacement link (resumed by `endReplacementWait`).
    mutating func awaitReplacement(of member: String, _ waiter: CheckedContinuation<PeerSession?, Never>) {
        replacementWaiters[member, default: []].append(waiter)
    }

    /// Ends the wait for `member`'s replacement link: every call waiting goes on with `session` (nil:
    /// they fail without a link).
    mutating func endReplacementWait(of member: String, with session: PeerSession?) {
        for waiter in replacementWaiters.removeValue(forKey: member) ?? [] { waiter.resume(returning: session) }
    }

    /// How many calls wait for `member`'s replacement link.
    func replacementWaiters(of member: String) -> Int { replacementWaiters[member]?.count ?? 0 }

    /// Whether any call waits for a replacement link.
    var awaitsAnyReplacement: Bool { !replacementWaiters.isEmpty }

    /// Ends every wait for a replacement link with nil (the node stops).
    mutating func endEveryReplacementWait() {
        for member in Array(replacementWaiters.keys) { endReplacementWait(of: member, with: nil) }
    }
}
