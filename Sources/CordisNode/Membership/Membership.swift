import CordisWire

/// Who is in the cluster as this node sees it, and which links stand for them: one value that takes
/// the link events of the node (a handshake completed, a link closed, heartbeats missed, members
/// learned from a peer) and answers with what the node must do.
///
/// Three rules decide everything, each in one place:
/// - **A duplicate link** (a second link of a member's live life, whoever dialled it) never displaces
///   the link in use. Only the member whose name sorts first closes duplicates; the other side keeps
///   them as standbys (at most `maxStandbys`), one of which takes over without any visible change if
///   the side that sorts first closed the one in use. Both sides so agree on the link that stays.
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
        /// A peer listed the members it knows.
        case learned([Member])
        /// An operator forgot a member: no more dialling, gone from the view.
        case forgotten(name: String)
    }

    /// What the node must do.
    enum Directive: Equatable, Sendable {
        /// Take the link into use for `member`: run it, send it `members` and the announcements.
        case adopt(session: Int, member: String)
        /// Keep a second link of a live life as a standby (read it, answer it, send nothing new on it).
        case keepStandby(session: Int, member: String)
        /// The standby becomes the link in use (the one in use closed); nothing else changes.
        case promote(session: Int, member: String)
        /// Refuse the link: tell the peer why, close it, log the conflict.
        case refuse(session: Int, reason: String)
        /// Close a duplicate link of a live life.
        case closeDuplicate(session: Int, member: String)
        /// Close a link that stopped answering heartbeats.
        case close(session: Int, reason: String)
        /// The member's life is over here: its proxies go, its calls fail, withdrawals stop waiting for it.
        case withdrawAll(member: String, incarnation: String)
        /// Keep a link to this address (a dialler that re-dials while its member is unlinked).
        case dial(String)
        /// Stop the dialler of this address.
        case stopDialling(String)
    }

    /// The most standby links one member may have; a further duplicate is closed.
    static let maxStandbys = 4
    /// The most members a node keeps in its view; names learned past it are ignored (a member list is
    /// input from a peer: it must not make the node keep or dial without bound).
    static let maxMembers = 1024
    /// The most addresses kept (and dialled) per member; the rest of a longer list is ignored.
    static let maxAddresses = 8

    /// This node's name.
    let name: String
    /// The addresses this node advertises (never dialled).
    let ownAddresses: Set<String>
    /// The seed addresses, dialled for the node's lifetime.
    let seeds: [String]
    /// Whether the node keeps a link to every member (the embedded mesh: learned members and linked
    /// members' addresses are dialled and re-dialled). False in etcd mode, where links open on demand.
    var dialsMembers = true
    /// The members, by name.
    private(set) var members: [String: Record] = [:]
    /// The member each link belongs to.
    private(set) var linkOwners: [Int: String] = [:]
    /// The addresses being dialled.
    private(set) var dialling: Set<String> = []
    /// Members an operator forgot, and their addresses.
    private(set) var forgottenNames: Set<String> = []
    private(set) var forgottenAddresses: Set<String> = []

    /// A view with no members; `start()` gives the dial directives of the seeds.
    init(name: String, ownAddresses: [String], seeds: [String]) {
        self.name = name
        self.ownAddresses = Set(ownAddresses)
        self.seeds = seeds
    }

    /// The dial directives for the seeds.
    mutating func start() -> [Directive] {
        var directives: [Directive] = []
        for address in seeds { dial(address, into: &directives) }
        return directives
    }

    /// The member a link belongs to, while it does (the link in use or the standby).
    func member(of session: Int) -> Record? {
        linkOwners[session].flatMap { members[$0] }
    }

    /// The session of the link in use to `member`.
    func session(of member: String) -> Int? { members[member]?.link?.session }

    /// The names of the members with a link up, sorted.
    var linkedNames: [String] { members.values.filter(\.isLinked).map(\.name).sorted() }

    /// The member an address belongs to, when known.
    func owner(of address: String) -> String? {
        members.values.first { $0.addresses.contains(address) }?.name
    }

    /// Whether the member that owns `address` has a link up (its dialler then waits).
    func isLinked(address: String) -> Bool {
        members.values.contains { $0.isLinked && $0.addresses.contains(address) }
    }

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
        case .learned(let list):
            for member in list where member.name != name && !forgottenNames.contains(member.name) {
                guard PeerName.isValid(member.name), members[member.name] != nil || members.count < Self.maxMembers else {
                    continue
                }
                var record = members[member.name] ?? Record(name: member.name, incarnation: "", addresses: [])
                if !record.isLinked {
                    if record.incarnation.isEmpty { record.incarnation = member.incarnation }
                    let previous = record.addresses
                    record.addresses = Array(member.addresses.prefix(Self.maxAddresses))
                    members[member.name] = record
                    superseded(previous, into: &directives)
                    for address in record.addresses { dial(address, into: &directives) }
                }
            }
        case .forgotten(let member):
            forgottenNames.insert(member)
            let addresses = members[member]?.addresses ?? []
            forgottenAddresses.formUnion(addresses)
            if members[member]?.isLinked != true { members[member] = nil }
            for address in addresses where dialling.contains(address) {
                dialling.remove(address)
                directives.append(.stopDialling(address))
            }
        }
        return directives
    }

    // MARK: - The rules

    private mutating func admit(
        _ link: LinkRef, peer: String, incarnation: String, addresses: [String], into directives: inout [Directive]
    ) {
        if peer == name {
            directives.append(.refuse(session: link.session, reason: "\(peer) uses this side's own name"))
            return
        }
        var record = members[peer] ?? Record(name: peer, incarnation: incarnation, addresses: addresses)
        if let live = record.link {
            guard record.incarnation == incarnation else {
                // A name conflict: the live life answers heartbeats, the newcomer is refused.
                directives.append(.refuse(
                    session: link.session,
                    reason: "a live member is named \(peer) (incarnation \(record.incarnation))"))
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
        // No live life: this one is the member now (a restart if the incarnation changed; the old life's
        // services were withdrawn when its link went).
        let previous = record.addresses
        record.incarnation = incarnation
        record.addresses = Array(addresses.prefix(Self.maxAddresses))
        record.link = link
        record.standbys = []
        members[peer] = record
        linkOwners[link.session] = peer
        forgottenNames.remove(peer)
        forgottenAddresses.subtract(addresses)
        directives.append(.adopt(session: link.session, member: peer))
        superseded(previous.filter { !addresses.contains($0) }, into: &directives)
        for address in addresses { dial(address, into: &directives) }
    }

    private mutating func lose(_ session: Int, into directives: inout [Directive]) {
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
        members[owner] = record
        directives.append(.withdrawAll(member: owner, incarnation: record.incarnation))
    }

    /// Stops the diallers of addresses no member and no seed uses any more.
    private mutating func superseded(_ addresses: [String], into directives: inout [Directive]) {
        for address in addresses where dialling.contains(address) && !seeds.contains(address) && owner(of: address) == nil {
            dialling.remove(address)
            directives.append(.stopDialling(address))
        }
    }

    private mutating func dial(_ address: String, into directives: inout [Directive]) {
        guard dialsMembers, !ownAddresses.contains(address), !forgottenAddresses.contains(address),
              !dialling.contains(address) else { return }
        dialling.insert(address)
        directives.append(.dial(address))
    }
}
