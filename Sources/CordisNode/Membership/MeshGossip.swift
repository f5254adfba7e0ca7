import CordisWire

/// The embedded mesh's discovery: a link to every member. The seeds are dialled for the node's
/// lifetime; a linked peer's member list names further members, whose addresses are dialled while they
/// are unlinked; a linked member's own addresses replace what was learned of it (a restart on new
/// addresses stops the old diallers). An address dialled belongs to the member its dial reached, while
/// it is dialled, even if that member does not advertise it (a seed given as another spelling): its
/// dialler waits while that member is linked, and forgetting the member stops it. A link's end, whatever
/// its cause, ends the life here: its proxies go at once and the dialler links it again.
struct MeshGossip: MemberDiscovery {
    /// The most members a node keeps in its view; names learned past it are ignored (a member list is
    /// input from a peer: it must not make the node keep or dial without bound).
    static let maxMembers = 1024
    /// The most addresses kept (and dialled) per member; the rest of a longer list is ignored.
    static let maxAddresses = Membership.maxAddresses

    /// This node's name.
    let name: String
    /// The addresses this node advertises (never dialled).
    let ownAddresses: Set<String>
    /// The seed addresses, dialled for the node's lifetime.
    let seeds: [String]
    /// The members learned or linked, by name.
    private(set) var known: [String: Member] = [:]
    /// The members with a link in use.
    private(set) var linked: Set<String> = []
    /// The mesh knows providers only through the links: it is not told of them.
    var followsLinkProviders: Bool { false }
    /// The addresses being dialled.
    private(set) var dialling: Set<String> = []
    /// The member each dialled address reached, while it is dialled.
    private(set) var reached: [String: String] = [:]
    /// Members an operator forgot, and their addresses.
    private(set) var forgottenNames: Set<String> = []
    private(set) var forgottenAddresses: Set<String> = []

    /// A view with no members; `.started` gives the dial directives of the seeds.
    init(name: String, ownAddresses: [String], seeds: [String]) {
        self.name = name
        self.ownAddresses = Set(ownAddresses)
        self.seeds = seeds
    }

    func member(named name: String) -> Member? { known[name] }

    func owner(of address: String) -> String? { advertiser(of: address) ?? reached[address] }

    func addresses(of member: String) -> [String] {
        Set(known[member]?.addresses ?? []).union(reached.filter { $0.value == member }.keys).sorted()
    }

    mutating func receive(_ event: DiscoveryEvent) -> [DiscoveryDirective] {
        var directives: [DiscoveryDirective] = []
        switch event {
        case .started:
            for address in seeds { dial(address, into: &directives) }
        case .dialled(let address, let member):
            if dialling.contains(address), member != name { reached[address] = member }
        case .linked(let member, let incarnation, let addresses):
            let kept = Array(addresses.prefix(Self.maxAddresses))
            let previous = known[member]?.addresses ?? []
            known[member] = Member(name: member, addresses: kept, incarnation: incarnation)
            linked.insert(member)
            forgottenNames.remove(member)
            forgottenAddresses.subtract(addresses)
            directives.append(.sendMembers(to: member))
            superseded(previous.filter { !kept.contains($0) }, into: &directives)
            for address in kept { dial(address, into: &directives) }
        case .unlinked(let member, let incarnation, _):
            linked.remove(member)
            directives.append(.dropProxies(member: member, incarnation: incarnation))
        case .peerListed(let list):
            for member in list where member.name != name && !forgottenNames.contains(member.name) {
                guard PeerName.isValid(member.name), known[member.name] != nil || known.count < Self.maxMembers,
                      !linked.contains(member.name)
                else { continue }
                let previous = known[member.name]
                let incarnation = (previous?.incarnation).flatMap { $0.isEmpty ? nil : $0 } ?? member.incarnation
                let addresses = Array(member.addresses.prefix(Self.maxAddresses))
                known[member.name] = Member(name: member.name, addresses: addresses, incarnation: incarnation)
                superseded(previous?.addresses ?? [], into: &directives)
                for address in addresses { dial(address, into: &directives) }
            }
        case .forgotten(let member):
            forgottenNames.insert(member)
            let addresses = addresses(of: member)
            forgottenAddresses.formUnion(addresses)
            if !linked.contains(member) { known[member] = nil }
            for address in addresses where dialling.contains(address) { stopDialling(address, into: &directives) }
        case .departed(let member):
            linked.remove(member)
            if let departed = known.removeValue(forKey: member) {
                directives.append(.dropProxies(member: member, incarnation: departed.incarnation))
                superseded(departed.addresses, into: &directives)
            }
        case .directoryListed, .directoryChanged, .redialFailed:
            break
        case .linkWithdrew, .linkAnnounced:
            // Never told (`followsLinkProviders`).
            break
        }
        return directives
    }

    /// Stops the diallers of addresses no member and no seed uses any more.
    private mutating func superseded(_ addresses: [String], into directives: inout [DiscoveryDirective]) {
        for address in addresses where dialling.contains(address) && !seeds.contains(address) && advertiser(of: address) == nil {
            stopDialling(address, into: &directives)
        }
    }

    private mutating func stopDialling(_ address: String, into directives: inout [DiscoveryDirective]) {
        dialling.remove(address)
        reached[address] = nil
        directives.append(.stopDialling(address))
    }

    private mutating func dial(_ address: String, into directives: inout [DiscoveryDirective]) {
        guard !ownAddresses.contains(address), !forgottenAddresses.contains(address), !dialling.contains(address)
        else { return }
        dialling.insert(address)
        directives.append(.dial(address))
    }
}
