import CordisWire

/// etcd mode as the node's `MemberDiscovery`: the node's link events and etcd's listings become the
/// directory's own events. A link that closed in order (idle) keeps its member's life; one that failed
/// ends it here at once (its proxies go) while etcd still lists it, and the node re-dials it.
extension EtcdDirectory: MemberDiscovery {
    var known: [String: Member] {
        members.mapValues { Member(name: $0.name, addresses: $0.addresses, incarnation: $0.incarnation) }
    }

    func member(named name: String) -> Member? {
        members[name].map { Member(name: $0.name, addresses: $0.addresses, incarnation: $0.incarnation) }
    }

    /// etcd lists providers too: a withdrawal over a link is told apart from etcd no longer listing one.
    var followsLinkProviders: Bool { true }

    mutating func receive(_ event: DiscoveryEvent) -> [DiscoveryDirective] {
        let directives: [Directive]
        switch event {
        case .forgotten(let name):
            forget(name)
            return []
        case .started, .peerListed, .departed, .dialled:
            return []
        case .linked(let member, let incarnation, _):
            directives = receive(Event.linkUp(member: member, incarnation: incarnation))
        case .unlinked(let member, let incarnation, let inOrder):
            if inOrder { return Self.translated(receive(Event.linkClosed(member: member))) }
            return Self.translated(receive(Event.linkFailed(member: member, incarnation: incarnation)))
                + [.dropProxies(member: member, incarnation: incarnation)]
        case .linkWithdrew(let member, let life):
            directives = receive(Event.withdrawnOverLink(member: member, life: life))
        case .linkAnnounced(let member, let life):
            directives = receive(Event.announcedOverLink(member: member, life: life))
        case .directoryListed(let kvs, let revision):
            directives = receive(Event.listed(kvs, revision: revision))
        case .directoryChanged(let changes, let revision):
            directives = receive(Event.changed(changes, revision: revision))
        case .redialFailed(let member, let random):
            directives = receive(Event.redialFailed(member: member, random: random))
        }
        return Self.translated(directives)
    }

    private static func translated(_ directives: [Directive]) -> [DiscoveryDirective] {
        directives.map { directive in
            switch directive {
            case .offer(let listing): .offer(listing)
            case .retract(let listing): .retract(listing)
            case .memberGone(let name, let incarnation): .memberGone(name: name, incarnation: incarnation)
            case .redial(let member, let delay): .redial(member, after: delay)
            case .restoreOwnKey: .restoreOwnKey
            case .ignoredUnknownKeys(let example): .ignoredUnknownKeys(example: example)
            }
        }
    }
}
