import CordisWire

/// How a node finds the members it is not linked to, and what a link's end means for a member's life:
/// the seam between the node and its mode. The embedded mesh (`MeshGossip`: seeds, member lists from
/// peers, a link to every member) is one implementation, etcd (`EtcdDirectory`: members and services
/// listed under leases, links only where calls flow) the other.
///
/// The node drives both the same way: it feeds the events of its links (and, in etcd mode, what etcd
/// reports) in the order they happen on the actor, and carries out the directives. `Membership` decides
/// which link stands for a member before any of this; a discovery owns no sockets and no clocks.
protocol MemberDiscovery: Sendable {
    /// The members this mode knows of, linked or not, other than this node; by name.
    var known: [String: Member] { get }

    /// The member named `name`, when known (without building `known`).
    func member(named name: String) -> Member?

    /// The member an address belongs to, when known: the one that advertises it or, in the mesh, the one
    /// a dial of it reached.
    func owner(of address: String) -> String?

    /// Every address known to be `member`'s: those it advertises and, in the mesh, those whose dial
    /// reached it.
    func addresses(of member: String) -> [String]

    /// Whether this mode follows the providers members announce and withdraw over their links
    /// (`linkAnnounced`, `linkWithdrew`): etcd does, to tell a withdrawal from a provider etcd no longer
    /// lists; the mesh knows providers only through the links, so it is not told.
    var followsLinkProviders: Bool { get }

    /// Takes one event; returns the directives, in the order to carry them out.
    mutating func receive(_ event: DiscoveryEvent) -> [DiscoveryDirective]
}

extension MemberDiscovery {
    /// The member that advertises `address`, when known.
    func advertiser(of address: String) -> String? {
        known.values.first { $0.addresses.contains(address) }?.name
    }

    func owner(of address: String) -> String? { advertiser(of: address) }

    func addresses(of member: String) -> [String] { self.member(named: member)?.addresses ?? [] }

    /// Whether `member` is known with `incarnation`.
    func knows(_ member: String, incarnation: String) -> Bool {
        self.member(named: member)?.incarnation == incarnation
    }
}
