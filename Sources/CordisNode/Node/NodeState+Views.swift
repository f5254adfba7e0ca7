import CordisWire

/// What the node reads of its state: the members as the cluster sees them, and which link a call takes.
extension NodeState {
    /// Every member this node knows, `own` (this node's entry) first, the others by name. What the
    /// discovery knows of a member wins over what its last link said (the discovery hears of a new life
    /// first); members known only by a link are listed too.
    func memberList(own: Member) -> [Member] {
        var others = discovery.known
        for record in membership.members.values where others[record.name] == nil {
            others[record.name] = Member(name: record.name, addresses: record.addresses, incarnation: record.incarnation)
        }
        // etcd mode: the members whose registration ended stay listed (down or stopped).
        for (member, registration) in (discovery as? EtcdDirectory)?.ended ?? [:] where others[member] == nil {
            others[member] = Member(name: member, addresses: registration.addresses, incarnation: registration.incarnation)
        }
        return [own] + others.values.filter { $0.name != name }.sorted { $0.name < $1.name }
    }

    /// The addresses of the members, by name (the discovery's over the links').
    var memberAddresses: [String: [String]] {
        var addresses = membership.members.mapValues(\.addresses)
        for (member, known) in discovery.known { addresses[member] = known.addresses }
        return addresses
    }

    /// The members this node knows (linked now or before, or found by the discovery), other than itself
    /// and those an operator forgot: the ones a cluster-wide status asks, events may be followed from, and
    /// an operator may forget.
    var knownMembers: Set<String> {
        var names = Set(membership.members.keys).union(discovery.known.keys)
        // etcd mode: the members whose registration ended stay known (down or stopped) until forgotten.
        if let etcd = discovery as? EtcdDirectory { names.formUnion(etcd.ended.keys) }
        return names.subtracting(forgottenNames).subtracting([name])
    }

    /// Every member's health now (see `MemberHealth`), this node's included: `degraded` without its etcd
    /// lease, else `up`. `silences` holds how long the link in use to each linked member has been silent
    /// (the shell's clock reading); a linked member silent for more than half `heartbeatTimeout` is
    /// `suspected`. Forgotten members are `left`. The one reading behind every view and event.
    func memberHealth(silences: [String: Duration], heartbeatTimeout: Duration) -> [String: MemberHealth] {
        var health: [String: MemberHealth] = [name: lease?.degraded != nil ? .degraded : .up]
        for member in knownMembers {
            health[member] = self.health(of: member, silence: silences[member], heartbeatTimeout: heartbeatTimeout)
        }
        for member in forgottenNames where member != name { health[member] = .left }
        return health
    }

    /// The health of `member`, known and not forgotten (see `memberHealth`).
    private func health(of member: String, silence: Duration?, heartbeatTimeout: Duration) -> MemberHealth {
        if membership.session(of: member) != nil {
            return (silence ?? .zero) > heartbeatTimeout / 2 ? .suspected : .up
        }
        let saidGoodbye = { (incarnation: String) in self.saidGoodbye[member] == incarnation }
        guard let etcd = discovery as? EtcdDirectory else {
            return membership.members[member].map { saidGoodbye($0.incarnation) } == true ? .stopped : .down
        }
        if let registration = etcd.members[member] {
            if registration.stopping || saidGoodbye(registration.incarnation) { return .stopped }
            // Registered: up without a link (links open only where calls flow), unless its link failed.
            return etcd.suspects[member] == registration.incarnation ? .down : .up
        }
        if let registration = etcd.ended[member] {
            return registration.stopping || saidGoodbye(registration.incarnation) ? .stopped : .down
        }
        return membership.members[member].map { saidGoodbye($0.incarnation) } == true ? .stopped : .down
    }

    /// Whether a subscription of `session`'s link that `asks` for the other members' events too gets them:
    /// only a console's does (a member follows this node's own events, so members never make each other
    /// follow the cluster).
    func followsCluster(session: Int, asks: Bool) -> Bool {
        asks && admission.consoleIdentity(of: session) != nil
    }

    /// The incarnation of the members, by name, once known (the discovery's over the links').
    var memberIncarnations: [String: String] {
        var incarnations = membership.members.compactMapValues { $0.incarnation.isEmpty ? nil : $0.incarnation }
        for (member, known) in discovery.known where !known.incarnation.isEmpty { incarnations[member] = known.incarnation }
        return incarnations
    }

    /// The link in use to the member that advertises `address` (or was reached there): a dialler of the
    /// address waits for that link to end before it dials again, whoever dialled it.
    func linkInUse(at address: String) -> Int? {
        discovery.owner(of: address).flatMap { membership.session(of: $0) }
    }

    /// Which link a call to a member takes.
    enum LinkChoice: Equatable, Sendable {
        /// The member's link in use, by session.
        case use(Int)
        /// The member's link in use is to another life than the call's: the provider it was for is gone.
        case gone
        /// No link in use, but one is on its way: the other link of one closed as a duplicate (waited for at
        /// most the replacement wait), or a dial on demand (etcd mode). Wait for it.
        case wait
        /// No link and none on its way: open one (etcd mode opens links as calls need them, `linkWanted`).
        case open
        /// No link, and none is opened (the mesh keeps its links, dialled by the discovery): the call fails.
        case unreachable
    }

    /// How many times a call waits for a member's link (`wait` or `open`) before it fails: a link opened
    /// just as the member closed it as a duplicate (both dialled at once) leaves the call waiting for the
    /// other link, a second time.
    static let linkWaitsPerCall = 2

    /// Which link a call to `member` takes now, after waiting `waited` times for one; a call to a provider
    /// of the member's life `life` (a proxy's) never takes a link to another life. A link opened or waited
    /// for is asked about again; after `linkWaitsPerCall` waits the answer is `use`, `gone` or
    /// `unreachable`. `mutating` though it changes nothing, as `route`: the node asks it for every call it
    /// makes.
    mutating func linkChoice(for member: String, life: String? = nil, waited: Int = 0) -> LinkChoice {
        let record = membership.members[member]
        if let record, let session = record.link?.session {
            if let life, record.incarnation != life { return .gone }
            return .use(session)
        }
        guard waited < Self.linkWaitsPerCall else { return .unreachable }
        if record?.awaitingReplacement != nil || dials.isOpening(member) { return .wait }
        return idle != nil ? .open : .unreachable
    }
}
