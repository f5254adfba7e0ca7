import CordisWire

/// Which links stand for the members this node is linked to: one value that takes the link events of
/// the node (a handshake completed, a link closed, heartbeats missed) and answers with what the node
/// must do. The link rules are the same in both modes; how members are found (the mesh's seeds and
/// gossip, or etcd's directory) is the `MemberDiscovery` beside it.
///
/// Three rules decide everything, each in one place:
/// - **A duplicate link** (a second link of a member's live life, whoever dialled it) never displaces
///   the link in use. Only the member whose name sorts first closes duplicates, and says so in its
///   `goodbye` (a reason starting with `duplicatePrefix`); the other side keeps them as standbys (at
///   most `maxStandbys`), one of which takes over without any visible change if the side that sorts
///   first closed the one in use. Both sides so agree on the link that stays. A link closed as a
///   duplicate is **drained**, never cut: the side closing it still answers the calls and requests
///   that arrive on it, and the side told about it sends nothing new on it and closes it once its own
///   calls on it are answered (`drain`), so no call fails because two links met. When the two nodes
///   dial each other at once, the side that sorts second may have taken into use the link the other
///   closes before its own link is up: told the link was closed as a duplicate and holding no standby,
///   it waits for the replacement (`awaitReplacement`: `NodeState` has a timer armed, the handshake
///   timeout, that reports `replacementOverdue` when it fires). The replacement then takes over like a standby
///   (a `promote`: members and announcements sent again, nothing withdrawn); only if none came in time
///   are the member's services withdrawn, as for any lost link.
/// - **A new incarnation** of a member replaces the old life only once the old life has no link (its
///   link closed or its heartbeats stopped); the old life's services are withdrawn then, once.
/// - **A name conflict** (a new incarnation while the old life's link is up, or a peer claiming this
///   node's own name) refuses the newcomer.
///
/// The node feeds it events in the order they happen on the actor and carries out the directives; it
/// owns no sockets and no clocks, so tests drive it with scripted events.
struct Membership {
    /// One link of a member, as the node knows it: the session's id and who dialled.
    struct LinkRef: Hashable, Sendable {
        /// The session's id, unique for the node's lifetime.
        var session: Int
        /// Whether this side dialled it.
        var side: Handshake.Side
    }

    /// A member other than this node.
    struct Record: Equatable, Sendable {
        /// The member's name.
        var name: String
        /// The life it has (or last had) on this node's view; empty before any handshake with it.
        var incarnation: String
        /// The addresses it advertises.
        var addresses: [String]
        /// The link in use, while linked.
        var link: LinkRef?
        /// Further links of the same life, oldest first, kept by the side that does not sort first.
        var standbys: [LinkRef] = []
        /// While the link in use was closed as a duplicate and no other was up: its session, until the
        /// replacement is adopted or the wait is over.
        var awaitingReplacement: Int?

        /// Whether a link to this life is up.
        var isLinked: Bool { link != nil }
    }

    /// What happens on the node's links.
    enum Event: Equatable, Sendable {
        /// A handshake with a node completed on a new link.
        case handshakeCompleted(session: Int, side: Handshake.Side, name: String, incarnation: String, addresses: [String])
        /// A link closed (either side closed it, or it failed).
        case linkClosed(session: Int)
        /// A link stopped answering heartbeats.
        case heartbeatMissed(session: Int)
        /// An operator forgot a member: gone from the view unless linked.
        case forgotten(name: String)
        /// The member on this link said it leaves the cluster (`goodbye` with `leaving`): it is dropped
        /// from the view (not forgotten: it may join again).
        case departed(session: Int)
        /// The member on this link said (its `goodbye` reason starts with `duplicatePrefix`) that it
        /// closes it as a duplicate of another link of the same life: the link is drained from then on
        /// and another takes over. Heeded from a member whose name sorts first only (the only side that
        /// closes duplicates).
        case closedAsDuplicate(session: Int)
        /// The wait for the replacement of link `closed`, armed by `awaitReplacement`, is over.
        case replacementOverdue(member: String, closed: Int)
        /// The discovery says the member's life `incarnation` is over (etcd no longer lists it): every
        /// link of that life closes with `reason`, standbys included, and the member is lost now.
        case lifeEnded(member: String, incarnation: String, reason: String)
    }

    /// What the node must do.
    enum Directive: Equatable, Sendable {
        /// Take the link into use for `member`: run it, send it `members` and the announcements.
        /// `restarted` when the member was known here as another life before (it restarted).
        case adopt(session: Int, member: String, restarted: Bool = false)
        /// Keep a second link of a live life as a standby (read it, answer it, send nothing new on it).
        case keepStandby(session: Int, member: String)
        /// The standby (or the replacement of a link closed as a duplicate) becomes the link in use:
        /// run it, send it `members` and the announcements again; nothing is withdrawn.
        case promote(session: Int, member: String)
        /// The link in use, session `closed`, was closed as a duplicate and no other link is up yet:
        /// the member has no link for now (new calls to it wait for the other one) but nothing is
        /// withdrawn; `replacementOverdue(member:closed:)` ends the wait (a timer of the handshake timeout,
        /// which `NodeState` has armed).
        case awaitReplacement(member: String, closed: Int)
        /// The member closes this link as a duplicate: it no longer stands for the member; send nothing
        /// new on it, take the answers of the calls already sent on it, then close it.
        case drain(session: Int, member: String)
        /// Refuse the link: tell the peer why, close it, log the conflict.
        case refuse(session: Int, reason: String)
        /// Close a duplicate link of a live life: say so in a `goodbye`, answer what the member still
        /// sends on it, and close it once the member does (or at a deadline).
        case closeDuplicate(session: Int, member: String)
        /// Close a link that stopped answering heartbeats.
        case close(session: Int, reason: String)
        /// The member's link is gone: its calls fail, withdrawals stop waiting for it (whether its life
        /// is over, and its proxies go, is the discovery's to say).
        case withdrawAll(member: String, incarnation: String)
    }

    /// How a `goodbye` reason starts when the sender closes the link as a duplicate.
    static let duplicatePrefix = "duplicate:"
    /// The most standby links one member may have; a further duplicate is closed.
    static let maxStandbys = 4
    /// The most addresses kept per member; the rest of a longer list is ignored.
    static let maxAddresses = 8

    /// This node's name.
    let name: String
    /// The members linked now or before, by name.
    private(set) var members: [String: Record] = [:]
    /// The member each link belongs to.
    private(set) var linkOwners: [Int: String] = [:]

    /// A view with no members.
    init(name: String) {
        self.name = name
    }

    /// The member a link belongs to, while it does (the link in use or the standby).
    func member(of session: Int) -> Record? {
        linkOwners[session].flatMap { members[$0] }
    }

    /// The session of the link in use to `member`.
    func session(of member: String) -> Int? { members[member]?.link?.session }

    /// The names of the members with a link up, sorted.
    var linkedNames: [String] { members.values.filter(\.isLinked).map(\.name).sorted() }

    /// Takes one event; returns the directives, in the order to carry them out.
    mutating func receive(_ event: Event) -> [Directive] {
        var directives: [Directive] = []
        switch event {
        case .handshakeCompleted(let session, let side, let peer, let incarnation, let addresses):
            admit(LinkRef(session: session, side: side), peer: peer, incarnation: incarnation, addresses: addresses, into: &directives)
        case .linkClosed(let session):
            lose(session, into: &directives)
        case .heartbeatMissed(let session):
            guard let owner = linkOwners[session] else { break }
            directives.append(.close(session: session, reason: "no heartbeat from \(owner)"))
            lose(session, into: &directives)
        case .closedAsDuplicate(let session):
            guard let owner = linkOwners[session], owner < name else { break }
            directives.append(.drain(session: session, member: owner))
            lose(session, awaitingReplacement: true, into: &directives)
        case .replacementOverdue(let member, let closed):
            guard var record = members[member], record.awaitingReplacement == closed, record.link == nil else { break }
            record.awaitingReplacement = nil
            members[member] = record
            directives.append(.withdrawAll(member: member, incarnation: record.incarnation))
        case .departed(let session):
            guard let owner = linkOwners[session], let record = members[owner], record.link?.session == session else {
                break
            }
            for standby in record.standbys {
                linkOwners[standby.session] = nil
                directives.append(.close(session: standby.session, reason: "\(owner) left the cluster"))
            }
            linkOwners[session] = nil
            members[owner] = nil
            // The member closes the link after its goodbye; one that keeps it open is closed here.
            directives.append(.close(session: session, reason: "\(owner) left the cluster"))
            directives.append(.withdrawAll(member: owner, incarnation: record.incarnation))
        case .lifeEnded(let member, let incarnation, let reason):
            guard var record = members[member], record.incarnation == incarnation else { break }
            for standby in record.standbys {
                linkOwners[standby.session] = nil
                directives.append(.close(session: standby.session, reason: reason))
            }
            record.standbys = []
            if let link = record.link {
                members[member] = record
                directives.append(.close(session: link.session, reason: reason))
                lose(link.session, into: &directives)
            } else if record.awaitingReplacement != nil {
                record.awaitingReplacement = nil
                members[member] = record
                directives.append(.withdrawAll(member: member, incarnation: incarnation))
            } else {
                members[member] = record
            }
        case .forgotten(let member):
            // A member waiting for its replacement link stays until the wait is over.
            if let record = members[member], !record.isLinked, record.awaitingReplacement == nil { members[member] = nil }
        }
        return directives
    }

    // MARK: - The rules

    /// Why a node named `peer` of life `incarnation` is refused while the life `live` of that name has a
    /// link up here: a name conflict (the live life answers heartbeats, the newcomer is refused); nil when
    /// it is the same life or none is live. The handshake asks it too, before adoption, against the lives
    /// linked at that moment (`AcceptedHandshake`, which the node updates as links are adopted and lost).
    static func nameConflict(_ peer: String, incarnation: String, live: String?) -> String? {
        guard let live, live != incarnation else { return nil }
        return "a live member is named \(peer) (incarnation \(live))"
    }

    private mutating func admit(
        _ link: LinkRef, peer: String, incarnation: String, addresses: [String], into directives: inout [Directive]
    ) {
        if peer == name {
            directives.append(.refuse(session: link.session, reason: "\(peer) uses this side's own name"))
            return
        }
        let known = members[peer]
        var record = known ?? Record(name: peer, incarnation: incarnation, addresses: addresses)
        if let live = record.link {
            if let conflict = Self.nameConflict(peer, incarnation: incarnation, live: record.incarnation) {
                directives.append(.refuse(session: link.session, reason: conflict))
                return
            }
            // A duplicate link of the live life: never displaces the one in use.
            if name < peer || record.standbys.count >= Self.maxStandbys || live == link {
                directives.append(.closeDuplicate(session: link.session, member: peer))
            } else {
                record.standbys.append(link)
                members[peer] = record
                linkOwners[link.session] = peer
                directives.append(.keepStandby(session: link.session, member: peer))
            }
            return
        }
        if record.awaitingReplacement != nil {
            record.awaitingReplacement = nil
            if record.incarnation == incarnation {
                // The replacement of the link closed as a duplicate: it takes over like a standby.
                record.addresses = Array(addresses.prefix(Self.maxAddresses))
                record.link = link
                members[peer] = record
                linkOwners[link.session] = peer
                directives.append(.promote(session: link.session, member: peer))
                return
            }
            // Another life: the one that waited is over.
            directives.append(.withdrawAll(member: peer, incarnation: record.incarnation))
        }
        // No live life: this one is the member now (a restart if the incarnation changed; the old life's
        // services were withdrawn when its link went).
        record.incarnation = incarnation
        record.addresses = Array(addresses.prefix(Self.maxAddresses))
        record.link = link
        record.standbys = []
        members[peer] = record
        linkOwners[link.session] = peer
        let restarted = known.map { !$0.incarnation.isEmpty && $0.incarnation != incarnation } ?? false
        directives.append(.adopt(session: link.session, member: peer, restarted: restarted))
    }

    /// Link `session` no longer stands for its member. The link in use hands over to a standby; with
    /// none, a link the member closed as a duplicate waits for its replacement (`awaits`), and any
    /// other ends the member's link.
    private mutating func lose(_ session: Int, awaitingReplacement awaits: Bool = false, into directives: inout [Directive]) {
        guard let owner = linkOwners.removeValue(forKey: session), var record = members[owner] else { return }
        if let index = record.standbys.firstIndex(where: { $0.session == session }) {
            record.standbys.remove(at: index)
            members[owner] = record
            return
        }
        guard record.link?.session == session else { return }
        if !record.standbys.isEmpty {
            let standby = record.standbys.removeFirst()
            record.link = standby
            members[owner] = record
            directives.append(.promote(session: standby.session, member: owner))
            return
        }
        record.link = nil
        if awaits {
            record.awaitingReplacement = session
            members[owner] = record
            directives.append(.awaitReplacement(member: owner, closed: session))
            return
        }
        members[owner] = record
        directives.append(.withdrawAll(member: owner, incarnation: record.incarnation))
    }
}
