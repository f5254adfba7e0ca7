@testable import CordisNode
import CordisDiscovery
import CordisProcessTesting
import CordisWire
import Foundation
import Testing

/// `NodeState` on scripted event sequences: events in, directives asserted, no sockets, no clocks.
@Suite("NodeState: the rules that join membership, discovery, exports and proxies")
struct NodeStateTests {
    static let interfaces = ["clock": Proxies.Interface(name: "Clock", version: "1")]
    static let withdrawTimeout = Duration.seconds(5)

    static func mesh(_ name: String = "a") -> NodeState {
        NodeState(
            name: name, discovery: MeshGossip(name: name, ownAddresses: [], seeds: []), interfaces: interfaces,
            withdrawTimeout: withdrawTimeout)
    }

    static func etcd(_ name: String = "a") -> NodeState {
        NodeState(name: name, discovery: EtcdDirectory(name: name), interfaces: interfaces, withdrawTimeout: withdrawTimeout)
    }

    static func handshake(_ session: Int, _ name: String, _ incarnation: String, side: Handshake.Side = .responder)
        -> NodeState.Event
    {
        .link(.handshakeCompleted(session: session, side: side, name: name, incarnation: incarnation, addresses: []))
    }

    static func clock(on node: String, life: Int, interface: String = "Clock", version: String = "1") -> ServiceAnnouncement {
        ServiceAnnouncement(
            service: "clock", realm: nil, interface: interface, interfaceVersion: version, node: node, fiber: life, life: life)
    }

    static func from(_ session: Int, _ message: WireMessage, role: NodeState.Role = .node) -> NodeState.Event {
        .received(message, session: session, role: role)
    }

    static func proxyKeys(_ directives: [NodeState.Directive]) -> [Proxies.Key] {
        directives.compactMap { if case .proxies(.create(let key, _, _)) = $0 { key } else { nil } }
    }

    @Test("A member linked: the link is adopted, the discovery learns it, the exports are announced to it, then waiting calls go on")
    func adoptionCascadesInOrder() {
        var state = Self.mesh()
        _ = state.receive(.exports(.available([Self.clock(on: "a", life: 7)])))
        let directives = state.receive(Self.handshake(1, "b", "b1"))
        #expect(directives == [
            .link(.adopt(session: 1, member: "b")),
            .discovery(.sendMembers(to: "b")),
            .exports(.announce(Self.clock(on: "a", life: 7), to: ["b"])),
            .linkSettled(member: "b"),
        ])
    }

    @Test("One proxy per member life and provider life: the same announcement again changes nothing; a new life of the member is another proxy")
    func oneProxyPerLife() {
        var state = Self.mesh()
        _ = state.receive(Self.handshake(1, "b", "b1"))
        #expect(Self.proxyKeys(state.receive(Self.from(1, .announce(Self.clock(on: "b", life: 3))))).count == 1)
        #expect(state.receive(Self.from(1, .announce(Self.clock(on: "b", life: 3)))) == [])
        #expect(state.proxies.live.count == 1)
        // b restarts: its old life's proxy goes when its link does, the new life's comes with its announcement.
        let lost = state.receive(.link(.linkClosed(session: 1)))
        #expect(lost.contains(.memberLost(member: "b", incarnation: "b1", link: 1, inOrder: false)))
        #expect(lost.contains { if case .proxies(.dispose(let key, _, .lifeEnded)) = $0 { key.incarnation == "b1" } else { false } })
        _ = state.receive(Self.handshake(2, "b", "b2"))
        let created = Self.proxyKeys(state.receive(Self.from(2, .announce(Self.clock(on: "b", life: 3)))))
        #expect(created.map(\.incarnation) == ["b2"])
    }

    @Test("An announcement of another interface makes no proxy and keeps the reason until the provider life ends")
    func interfaceMismatch() {
        var state = Self.mesh()
        _ = state.receive(Self.handshake(1, "b", "b1"))
        let directives = state.receive(Self.from(1, .announce(Self.clock(on: "b", life: 3, version: "2"))))
        #expect(directives.count == 1)
        guard case .proxies(.mismatch(_, let reason)) = directives.first else {
            Issue.record("expected a mismatch, got \(directives)")
            return
        }
        #expect(reason == "clock on b speaks Clock version 2; this node knows Clock version 1")
        #expect(state.proxies.mismatchReasons == ["clock": reason])
        #expect(state.proxies.live.isEmpty)
        _ = state.receive(Self.from(1, .withdraw(Self.clock(on: "b", life: 3, version: "2").provider)))
        #expect(state.proxies.mismatchReasons.isEmpty)
    }

    @Test("A withdrawal over a link disposes the proxy and is acknowledged once the disposal finished, on the link it came by; one repeated meanwhile waits for it too; one with no proxy is acknowledged at once")
    func withdrawalAcknowledgedAfterUnloading() throws {
        var state = Self.mesh()
        _ = state.receive(Self.handshake(4, "b", "b1"))
        let announced = Self.clock(on: "b", life: 3)
        let key = try #require(Self.proxyKeys(state.receive(Self.from(4, .announce(announced)))).first)
        let owed = Proxies.Acknowledgement(provider: announced.provider, session: 4)
        let disposal = state.receive(Self.from(4, .withdraw(announced.provider)))
        guard disposal.count == 1, case .proxies(.dispose(key, let id, .withdrawn)) = disposal[0] else {
            Issue.record("expected the proxy's disposal, got \(disposal)")
            return
        }
        // The consumers are still unloading: the same withdrawal again is not acknowledged yet.
        #expect(state.receive(Self.from(4, .withdraw(announced.provider))) == [])
        #expect(state.receive(.proxyDisposed(id)) == [.proxies(.acknowledge(owed)), .proxies(.acknowledge(owed))])
        #expect(state.receive(.proxyDisposed(id)) == [])
        #expect(state.receive(Self.from(4, .withdraw(announced.provider))) == [.proxies(.acknowledge(owed))])
    }

    @Test("A proxy made again while its earlier one still unloads: a withdrawal is acknowledged only once neither proxy's consumers unload any more, whichever disposal ends first")
    func acknowledgedAfterEveryDisposal() throws {
        for secondEndsFirst in [true, false] {
            var state = Self.mesh()
            _ = state.receive(Self.handshake(4, "b", "b1"))
            let announced = Self.clock(on: "b", life: 3)
            let owed = Proxies.Acknowledgement(provider: announced.provider, session: 4)
            _ = state.receive(Self.from(4, .announce(announced)))
            guard case .proxies(.dispose(_, let first, _))? = state.receive(Self.from(4, .withdraw(announced.provider))).first else {
                Issue.record("no disposal")
                return
            }
            // Announced again (the same provider life) while the first proxy's consumers unload: a second proxy.
            #expect(Self.proxyKeys(state.receive(Self.from(4, .announce(announced)))).count == 1)
            guard case .proxies(.dispose(_, let second, _))? = state.receive(Self.from(4, .withdraw(announced.provider))).first else {
                Issue.record("no second disposal")
                return
            }
            let (early, late) = secondEndsFirst ? (second, first) : (first, second)
            #expect(state.receive(.proxyDisposed(early)) == [], "the other proxy's consumers still unload")
            #expect(state.receive(Self.from(4, .withdraw(announced.provider))) == [], "repeated: it waits too")
            #expect(state.receive(.proxyDisposed(late)) == Array(repeating: .proxies(.acknowledge(owed)), count: 3))
        }
    }

    @Test("The acknowledgement of a withdrawal whose link went while the consumers unloaded goes on the member's new link")
    func acknowledgementFollowsTheLinkInUse() throws {
        var state = Self.mesh()
        _ = state.receive(Self.handshake(4, "b", "b1"))
        let announced = Self.clock(on: "b", life: 3)
        _ = state.receive(Self.from(4, .announce(announced)))
        guard case .proxies(.dispose(_, let id, _))? = state.receive(Self.from(4, .withdraw(announced.provider))).first else {
            Issue.record("no disposal")
            return
        }
        _ = state.receive(.link(.linkClosed(session: 4)))
        _ = state.receive(Self.handshake(6, "b", "b1"))
        #expect(state.receive(.proxyDisposed(id)) == [
            .proxies(.acknowledge(Proxies.Acknowledgement(provider: announced.provider, session: 6))),
        ])
    }

    @Test("Who may send what: consoles, members speaking for others, links in use by no member, drained links")
    func senderRules() {
        var state = Self.mesh()
        _ = state.receive(Self.handshake(1, "b", "b1"))
        let foreign = Self.clock(on: "c", life: 1)
        #expect(state.route(.announce(foreign), session: 1, role: .node)
            == .drop(reason: "it announces a provider on c"))
        #expect(state.route(.withdraw(foreign.provider), session: 1, role: .node)
            == .drop(reason: "it withdraws a provider on c"))
        #expect(state.route(.withdrawAck(foreign.provider), session: 1, role: .node)
            == .drop(reason: "it acknowledges a provider on c"))
        #expect(state.route(.announce(Self.clock(on: "b", life: 1)), session: 1, role: .console)
            == .drop(reason: "a console sends requests, calls and cancels only"))
        #expect(state.route(.cancel(id: 1), session: 9, role: .console) == .serve)
        #expect(state.route(.announce(Self.clock(on: "b", life: 1)), session: 2, role: .node)
            == .drop(reason: "the link is no longer in use"))
        // A second link of b's life: a, sorting first, drains it.
        _ = state.receive(Self.handshake(3, "b", "b1"))
        #expect(state.drained == [3])
        #expect(state.route(.cancel(id: 1), session: 3, role: .node) == .serve)
        #expect(state.route(.announce(Self.clock(on: "b", life: 1)), session: 3, role: .node) == .ignore)
        // What a drop decides leaves the state as it was.
        #expect(state.receive(Self.from(1, .announce(foreign))) == [
            .drop(.announce(foreign), session: 1, reason: "it announces a provider on c"),
        ])
        #expect(state.proxies.live.isEmpty)
        // Taken in one call: a served message decides nothing; one that changes the view comes with what
        // `receive` decides for it.
        let served = state.take(.cancel(id: 1), session: 1, role: .node)
        #expect(served.route == .serve && served.directives.isEmpty)
        var twin = state
        let own = Self.clock(on: "b", life: 2)
        let taken = state.take(.announce(own), session: 1, role: .node)
        #expect(taken.route == .decide && !taken.directives.isEmpty)
        #expect(taken.directives == twin.receive(Self.from(1, .announce(own))))
        #expect(state.proxies.live == twin.proxies.live && state.proxies.live.count == 1)
    }

    @Test("A duplicate goodbye drains the link: said in the 1.4 field, or in a 1.3 reason; from a member that sorts first only")
    func duplicateGoodbye() {
        for goodbye in [
            WireMessage.goodbye(reason: "a link to b already exists", duplicate: true),
            .goodbye(reason: "duplicate: a link to b already exists"),
        ] {
            var state = Self.mesh("b")
            _ = state.receive(Self.handshake(1, "a", "a1"))
            let directives = state.receive(Self.from(1, goodbye))
            #expect(directives.contains(.drain(
                session: 1, member: "a", goodbye: nil, deadline: .seconds(35))), "\(goodbye)")
            #expect(directives.contains(.link(.awaitReplacement(member: "a", closed: 1))), "\(goodbye)")
            #expect(directives.contains(.schedule(.link(.replacementOverdue(member: "a", closed: 1)), after: .seconds(5))), "\(goodbye)")
            #expect(!directives.contains { if case .memberLost = $0 { true } else { false } }, "\(goodbye)")
            // b closes the link a said is a duplicate once nothing on it is in flight.
            #expect(state.receive(.drainedIdle(session: 1)) == [.link(.close(session: 1, reason: "the duplicate link is drained"))])
        }
        var state = Self.mesh("a")
        _ = state.receive(Self.handshake(1, "b", "b1"))
        let ignored = state.receive(Self.from(1, .goodbye(reason: "x", duplicate: true)))
        #expect(ignored == [.saidGoodbye(session: 1, reason: "x", leaving: false)])
    }

    @Test("In etcd mode a link closed as idle, by either side, ends in order: the member's life goes on")
    func idleCloseIsInOrder() {
        var state = Self.etcd()
        _ = state.receive(Self.handshake(1, "b", "b1"))
        let start = ContinuousClock.now
        _ = state.receive(.idleSweep(at: start, busy: []))
        #expect(state.receive(.idleSweep(at: start + .seconds(11), busy: [])) == [.closeIdle(session: 1, member: "b")])
        #expect(state.receive(.link(.linkClosed(session: 1))).first == .memberLost(member: "b", incarnation: "b1", link: 1, inOrder: true))
        _ = state.receive(Self.handshake(2, "b", "b1"))
        _ = state.receive(Self.from(2, .goodbye(reason: NodeState.idleReason)))
        #expect(state.receive(.link(.linkClosed(session: 2))).first == .memberLost(member: "b", incarnation: "b1", link: 2, inOrder: true))
        _ = state.receive(Self.handshake(3, "b", "b1"))
        #expect(state.receive(.link(.linkClosed(session: 3))).first == .memberLost(member: "b", incarnation: "b1", link: 3, inOrder: false))
        // The mesh never closes idle links: an `idle` goodbye there is a plain goodbye.
        var mesh = Self.mesh()
        _ = mesh.receive(Self.handshake(1, "b", "b1"))
        _ = mesh.receive(Self.from(1, .goodbye(reason: NodeState.idleReason)))
        #expect(mesh.receive(.link(.linkClosed(session: 1))).first == .memberLost(member: "b", incarnation: "b1", link: 1, inOrder: false))
    }

    @Test("A member that leaves is dropped: its link closes, its proxies go, the discovery forgets it")
    func leavingMember() {
        var state = Self.mesh()
        _ = state.receive(Self.handshake(1, "b", "b1"))
        _ = state.receive(Self.from(1, .announce(Self.clock(on: "b", life: 3))))
        let directives = state.receive(Self.from(1, .goodbye(reason: "decommissioned", leaving: true)))
        #expect(directives.first == .saidGoodbye(session: 1, reason: "decommissioned", leaving: true))
        #expect(directives.contains(.link(.close(session: 1, reason: "b left the cluster"))))
        #expect(directives.contains(.memberLost(member: "b", incarnation: "b1", link: 1, inOrder: false)))
        #expect(state.proxies.live.isEmpty)
        #expect(state.discovery.known["b"] == nil)
    }

    @Test("A forgotten member stays forgotten until it links again; its addresses stop being dialled, the seed that reached it too")
    func forgottenUntilLinked() {
        var state = NodeState(
            name: "a", discovery: MeshGossip(name: "a", ownAddresses: [], seeds: ["unix:/seed"]), interfaces: Self.interfaces,
            withdrawTimeout: Self.withdrawTimeout)
        #expect(state.receive(.started) == [.dial(attempt: 1, address: "unix:/seed")])
        #expect(state.receive(.dialled(attempt: 1, address: "unix:/seed", member: "c")) == [.adoptDialled(attempt: 1)])
        _ = state.receive(.link(.handshakeCompleted(
            session: 1, side: .initiator, name: "c", incarnation: "c1", addresses: ["unix:/c.sock"])))
        _ = state.receive(.dialEnded(attempt: 1, session: 1, random: 1))
        // Lost: both addresses are dialled again (the seed is c's, reached there).
        #expect(state.receive(.link(.linkClosed(session: 1))).filter { if case .dial = $0 { true } else { false } }
            == [.dial(attempt: 2, address: "unix:/c.sock"), .dial(attempt: 3, address: "unix:/seed")])
        #expect(state.receive(.forgotten(name: "c")) == [.forgot(member: "c", addresses: ["unix:/c.sock", "unix:/seed"], tell: [])])
        // The dials on their way end, and neither address is dialled again.
        #expect(state.receive(.dialEnded(attempt: 2, session: nil, random: 1)).isEmpty)
        #expect(state.receive(.dialled(attempt: 3, address: "unix:/seed", member: "c")) == [.discardDialled(attempt: 3, reason: "stopped dialling", goodbye: "a stopped dialling")])
        #expect(state.receive(.dialEnded(attempt: 3, session: nil, random: 1)).isEmpty)
        #expect(state.dials.kept.isEmpty)
        #expect(state.forgottenNames == ["c"])
        #expect(state.membership.members["c"] == nil)
        let linked = state.receive(.link(.handshakeCompleted(
            session: 2, side: .responder, name: "c", incarnation: "c2", addresses: ["unix:/c.sock"])))
        // Forgotten before, it is not taken for a restart.
        #expect(linked.first == .link(.adopt(session: 2, member: "c")))
        #expect(state.forgottenNames.isEmpty)
    }

    @Test("Forget: refused for the node itself, a member linked, or a name unknown here (but not one passed on by another member); otherwise passed on to every member whose link is in use")
    func forgetRules() {
        var state = Self.mesh()
        _ = state.receive(Self.handshake(1, "b", "b1"))
        _ = state.receive(Self.handshake(2, "c", "c1"))
        _ = state.receive(Self.from(1, .members([Member(name: "d", addresses: ["unix:/d"], incarnation: "d1")])))
        #expect(state.receive(.forgotten(name: "a")) == [.forgetRefused(member: "a", reason: "a cannot forget itself")])
        #expect(state.receive(.forgotten(name: "b"))
            == [.forgetRefused(member: "b", reason: "b is linked to a; stop it before forgetting it")])
        #expect(state.receive(.forgotten(name: "x")) == [.forgetRefused(member: "x", reason: "no member is named x")])
        #expect(state.forgottenNames.isEmpty)
        #expect(state.receive(.forgotten(name: "d")).last == .forgot(member: "d", addresses: ["unix:/d"], tell: [1, 2]))
        #expect(state.knownMembers == ["b", "c"])
        // Passed on by a member: forgotten even if unknown here, and not passed on again.
        #expect(state.receive(.forgotten(name: "x", relayed: true)) == [.forgot(member: "x", addresses: [], tell: [])])
        #expect(state.receive(.forgotten(name: "b", relayed: true)).first?.isForgetRefusal == true)
    }

    @Test("Membership events: the first reading of the members' health tells nothing; each later one tells what changed since the last, once")
    func healthChanges() {
        var state = Self.mesh()
        #expect(state.receive(.healthRead(["a": .up, "b": .up])).isEmpty)
        #expect(state.receive(.healthRead(["a": .up, "b": .suspected, "c": .up]))
            == [.memberHealthChanged(.init(member: "b", change: "suspected")), .memberHealthChanged(.init(member: "c", change: "up"))])
        #expect(state.receive(.healthRead(["a": .up, "b": .suspected, "c": .up])).isEmpty)
        #expect(state.receive(.healthRead(["a": .degraded, "b": .down]))
            == [.memberHealthChanged(.init(member: "a", change: "degraded")), .memberHealthChanged(.init(member: "b", change: "down")),
                .memberHealthChanged(.init(member: "c", change: "left"))])
        #expect(state.receive(.healthRead(["a": .up, "b": .down])) == [.memberHealthChanged(.init(member: "a", change: "recovered"))])
    }

    @Test("In etcd mode, proxies follow what etcd offers and retracts, with no acknowledgement owed")
    func etcdOffersAndRetracts() {
        var state = Self.etcd()
        let announcement = Self.clock(on: "b", life: 5)
        let member = EtcdKeyValue(
            key: EtcdDirectory.memberKey("b"),
            value: EtcdDirectory.memberValue(.init(name: "b", incarnation: "b1", addresses: ["unix:/b.sock"]), version: "test"))
        let service = EtcdKeyValue(
            key: EtcdDirectory.serviceKey(node: "b", life: 5),
            value: EtcdDirectory.serviceValue(announcement, incarnation: "b1"))
        let offered = state.receive(.directory(.directoryListed([member, service], revision: 2)))
        #expect(Self.proxyKeys(offered).map(\.life) == [5])
        let retracted = state.receive(.directory(.directoryChanged([.delete(key: service.key, revision: 3)], revision: 3)))
        #expect(retracted.contains { if case .proxies(.dispose(_, _, .retracted)) = $0 { true } else { false } })
        #expect(state.proxies.live.isEmpty)
    }

    @Test("etcd mode: a member life etcd no longer lists closes every link of it, standby included, and the member is lost at once")
    func memberGoneClosesEveryLink() {
        // c keeps a second link of b's life as a standby (b, whose name sorts first, closes duplicates).
        var state = Self.etcd("c")
        let member = EtcdDirectoryMachineTests.member("b", "b1")
        _ = state.receive(.directory(.directoryListed([member], revision: 2)))
        _ = state.receive(Self.handshake(1, "b", "b1"))
        _ = state.receive(Self.handshake(2, "b", "b1", side: .initiator))
        #expect(state.membership.members["b"]?.standbys.map(\.session) == [2])
        let gone = state.receive(.directory(.directoryChanged([.delete(key: member.key, revision: 3)], revision: 3)))
        let reason = "b's etcd lease ended"
        #expect(gone.contains(.link(.close(session: 1, reason: reason))))
        #expect(gone.contains(.link(.close(session: 2, reason: reason))))
        #expect(gone.contains(.memberLost(member: "b", incarnation: "b1", link: 1, inOrder: false)))
        #expect(state.membership.session(of: "b") == nil)
        // The closed links end later: no standby takes over, nothing more is lost.
        #expect(state.receive(.link(.linkClosed(session: 1))).isEmpty)
        #expect(state.receive(.link(.linkClosed(session: 2))).isEmpty)
    }

    @Test("In etcd mode a sweep closes, as idle, each member's link in use that carried no call for the idle timeout and has no work in flight; the mesh closes none")
    func idleSweep() {
        var state = Self.etcd()
        _ = state.receive(Self.handshake(1, "b", "b1"))
        _ = state.receive(Self.handshake(2, "c", "c1"))
        let start = ContinuousClock.now
        state.linkUsed(by: "b", at: start)
        // c is first seen at this sweep: it counts as used then.
        #expect(state.receive(.idleSweep(at: start + .seconds(1), busy: [])) == [])
        // b is past the timeout; c too, but it has work in flight.
        #expect(state.receive(.idleSweep(at: start + .seconds(12), busy: ["c"])) == [.closeIdle(session: 1, member: "b")])
        // Its close is in order: b's life goes on.
        #expect(state.receive(.link(.linkClosed(session: 1))).first == .memberLost(member: "b", incarnation: "b1", link: 1, inOrder: true))
        // c's work is done; b links again, and its last use went with its old link: a whole timeout again.
        _ = state.receive(Self.handshake(3, "b", "b1"))
        #expect(state.receive(.idleSweep(at: start + .seconds(13), busy: [])) == [.closeIdle(session: 2, member: "c")])
        #expect(state.receive(.idleSweep(at: start + .seconds(22), busy: [])) == [])
        #expect(state.receive(.idleSweep(at: start + .seconds(24), busy: [])) == [.closeIdle(session: 3, member: "b")])
        var mesh = Self.mesh()
        _ = mesh.receive(Self.handshake(1, "b", "b1"))
        #expect(mesh.receive(.idleSweep(at: start, busy: [])) == [])
        #expect(mesh.receive(.idleSweep(at: start + .seconds(3600), busy: [])) == [])
    }

    @Test("A silent link of no member (a console's, a drained duplicate) closes and nothing follows; a member's silent link in use is lost, or hands over to a standby")
    func heartbeatOnALinkOfNoMember() {
        var state = Self.mesh()
        _ = state.receive(.established(session: 4, holder: .console(identity: "uid:0", role: nil)))
        #expect(state.receive(.silent(session: 4, peer: "console-1")) == [.link(.close(session: 4, reason: "no heartbeat from console-1"))])
        _ = state.receive(Self.handshake(1, "b", "b1"))
        // A drained duplicate of b's life (a, sorting first, drains it) closes too, deciding nothing.
        _ = state.receive(Self.handshake(2, "b", "b1"))
        #expect(state.receive(.silent(session: 2, peer: "b")) == [.link(.close(session: 2, reason: "no heartbeat from b"))])
        _ = state.receive(.link(.linkClosed(session: 2)))
        let lost = state.receive(.silent(session: 1, peer: "b"))
        #expect(lost.first == .link(.close(session: 1, reason: "no heartbeat from b")))
        #expect(lost.contains(.memberLost(member: "b", incarnation: "b1", link: 1, inOrder: false)))
        // A silent link in use with a standby (kept by the side that sorts second): the standby takes over,
        // the silent link is retired, the member is not lost.
        var second = Self.mesh("b")
        _ = second.receive(Self.handshake(1, "a", "a1"))
        _ = second.receive(Self.handshake(2, "a", "a1"))
        let handedOver = second.receive(.silent(session: 1, peer: "a"))
        #expect(Array(handedOver.prefix(3)) == [
            .link(.close(session: 1, reason: "no heartbeat from a")), .retired(session: 1), .link(.promote(session: 2, member: "a")),
        ])
        #expect(!handedOver.contains { if case .memberLost = $0 { true } else { false } })
    }

    @Test("On a Unix socket a member is admitted only when its socket is served by this node's user or root; a console by anyone the socket admits")
    func nodeRoleByUID() {
        var state = NodeState(
            name: "a", discovery: MeshGossip(name: "a", ownAddresses: [], seeds: []), interfaces: Self.interfaces, ownUID: 1000,
            withdrawTimeout: Self.withdrawTimeout)
        #expect(state.receive(.established(session: 1, holder: .member("b"), peerUID: 1001)) == [
            .notAdmitted(session: 1, reason: "its Unix socket is served by uid 1001, neither this node's user nor root"),
        ])
        #expect(state.receive(.established(session: 2, holder: .member("b"), peerUID: 1000)) == [])
        #expect(state.receive(.established(session: 3, holder: .member("c"), peerUID: 0)) == [])
        #expect(state.receive(.established(session: 4, holder: .member("d"))) == [])
        #expect(state.receive(.established(session: 5, holder: .console(identity: "uid:1001", role: nil), peerUID: 1001)) == [])
        #expect(state.admission.holders.keys.sorted() == [2, 3, 4, 5])
    }

    @Test("A standby takes over when the link in use closes: the old link's calls fail, the members and announcements go again on the new one, nothing is withdrawn")
    func standbyPromoted() {
        var state = Self.mesh("b")
        _ = state.receive(.exports(.available([Self.clock(on: "b", life: 7)])))
        _ = state.receive(Self.handshake(1, "a", "a1"))
        #expect(state.receive(Self.handshake(2, "a", "a1")) == [.link(.keepStandby(session: 2, member: "a"))])
        #expect(state.receive(.link(.linkClosed(session: 1))) == [
            .retired(session: 1),
            .link(.promote(session: 2, member: "a")),
            .discovery(.sendMembers(to: "a")),
            .exports(.announce(Self.clock(on: "b", life: 7), to: ["a"])),
            .linkSettled(member: "a"),
        ])
        #expect(state.linkChoice(for: "a") == .use(2))
    }

    @Test("A duplicate of a live life is drained by the side that sorts first, its goodbye said, for at most a call's timeout and a handshake's")
    func duplicateDrained() {
        var state = NodeState(
            name: "a", discovery: MeshGossip(name: "a", ownAddresses: [], seeds: []), interfaces: Self.interfaces,
            withdrawTimeout: Self.withdrawTimeout, callTimeout: .seconds(7), handshakeTimeout: .seconds(2))
        _ = state.receive(Self.handshake(1, "b", "b1"))
        #expect(state.receive(Self.handshake(2, "b", "b1")) == [.drain(
            session: 2, member: "b", goodbye: "duplicate: a link to b already exists", deadline: .seconds(9))])
        // a said so: b closes it; idle here, a does not.
        #expect(state.receive(.drainedIdle(session: 2)) == [])
        #expect(state.receive(.link(.linkClosed(session: 2))) == [])
        #expect(state.drained.isEmpty && state.closingWhenIdle.isEmpty)
    }

    @Test("Which link a call takes: the link in use; while a duplicate's replacement comes, that one; with none, a new one in etcd mode and none in the mesh")
    func linkChoice() {
        var mesh = Self.mesh("b")
        #expect(mesh.linkChoice(for: "a") == .unreachable)
        _ = mesh.receive(Self.handshake(1, "a", "a1"))
        #expect(mesh.linkChoice(for: "a") == .use(1))
        _ = mesh.receive(Self.from(1, .goodbye(reason: "x", duplicate: true)))
        #expect(mesh.linkChoice(for: "a") == .wait)
        _ = mesh.receive(.link(.replacementOverdue(member: "a", closed: 1)))
        #expect(mesh.linkChoice(for: "a") == .unreachable)
        var fresh = Self.etcd()
        #expect(fresh.linkChoice(for: "b") == .open)
        // A proxy's call takes only a link to the life the proxy was made for; with no link, one is opened
        // (etcd mode) and asked about again.
        var etcd = Self.etcd("b")
        _ = etcd.receive(Self.handshake(1, "a", "a2"))
        #expect(etcd.linkChoice(for: "a", life: "a2") == .use(1))
        #expect(etcd.linkChoice(for: "a", life: "a1") == .gone)
        _ = etcd.receive(.link(.linkClosed(session: 1)))
        #expect(etcd.linkChoice(for: "a", life: "a1") == .open)
    }

    @Test("The members as the cluster sees them: what the discovery knows wins over what a link said; members known by a link only are listed too")
    func memberLists() {
        var state = NodeState(
            name: "a", discovery: MeshGossip(name: "a", ownAddresses: [], seeds: []), interfaces: Self.interfaces,
            withdrawTimeout: Self.withdrawTimeout)
        _ = state.receive(.link(.handshakeCompleted(session: 1, side: .initiator, name: "b", incarnation: "b1", addresses: ["unix:/b1"])))
        _ = state.receive(.link(.handshakeCompleted(session: 2, side: .initiator, name: "d", incarnation: "d1", addresses: ["unix:/d"])))
        _ = state.receive(.link(.linkClosed(session: 1)))
        // c is known from d's list only; d's list also says b moved to another address since.
        _ = state.receive(Self.from(2, .members([
            Member(name: "b", addresses: ["unix:/b2"], incarnation: "b1"),
            Member(name: "c", addresses: ["unix:/c"], incarnation: "c1"),
        ])))
        #expect(state.membership.members["b"]?.addresses == ["unix:/b1"])
        let own = Member(name: "a", addresses: ["unix:/a"], incarnation: "a1")
        let listed = state.memberList(own: own)
        #expect(listed.map(\.name) == ["a", "b", "c", "d"])
        #expect(listed.first == own)
        #expect(listed.first { $0.name == "b" }?.addresses == ["unix:/b2"])
        #expect(state.memberAddresses["b"] == ["unix:/b2"])
        #expect(state.memberAddresses["c"] == ["unix:/c"])
        #expect(state.memberIncarnations == ["b": "b1", "c": "c1", "d": "d1"])
        // The members known: linked now or before, or listed; not this node, not one forgotten or departed.
        #expect(state.knownMembers == ["b", "c", "d"])
        _ = state.receive(.forgotten(name: "c"))
        _ = state.receive(Self.from(2, .goodbye(reason: "decommissioned", leaving: true)))
        #expect(state.knownMembers == ["b"])
    }

    @Test("A proxy the node could not create does not exist: its withdrawal is acknowledged at once, with nothing to dispose")
    func proxyNotCreated() throws {
        var state = Self.mesh()
        _ = state.receive(Self.handshake(1, "b", "b1"))
        let created = state.receive(Self.from(1, .announce(Self.clock(on: "b", life: 3))))
        let key = try #require(Self.proxyKeys(created).first)
        #expect(created == [.proxies(.create(key, Self.clock(on: "b", life: 3), rank: "b"))])
        _ = state.receive(.proxies(.notCreated(key)))
        #expect(state.proxies.live.isEmpty)
        let provider = Self.clock(on: "b", life: 3).provider
        #expect(state.receive(Self.from(1, .withdraw(provider))) == [.proxies(.acknowledge(.init(provider: provider, session: 1)))])
    }

    @Test("etcd mode: the lease back while its loss's withdrawals wait for acknowledgements: the exports are shared again once the last ends, not before; lost again meanwhile, not then")
    func sharedAgainAfterTheWithdrawals() {
        var state = Self.etcd()
        let start = ContinuousClock.now
        _ = state.receive(.lease(.registered(at: start)))
        _ = state.receive(Self.handshake(1, "b", "b1"))
        let life1 = Self.clock(on: "a", life: 1)
        _ = state.receive(.exports(.available([life1])))
        // etcd silent past the lease: the export is withdrawn from b (the node then shares nothing).
        let late = start + .seconds(60)
        #expect(state.receive(.lease(.unanswered(at: late, reason: "timeout"))).contains(.lease(.withdrawExports)))
        _ = state.receive(.exports(.available([])))
        #expect(state.exports.isWithdrawing)
        // The lease answers again while b has not acknowledged: nothing is shared yet.
        #expect(!state.receive(.lease(.kept(at: late))).contains(.lease(.shareAgain(afterWithdrawal: true))))
        // b acknowledges: the withdrawal ends, and then the exports are shared again, once (taken as the
        // node takes a message, too).
        var taking = state
        let acknowledged = state.receive(Self.from(1, .withdrawAck(life1.provider)))
        #expect(taking.take(.withdrawAck(life1.provider), session: 1, role: .node).directives == acknowledged)
        #expect(acknowledged.contains(.exports(.release(life1.provider, .finished(acknowledged: ["b"], lost: [])))))
        #expect(acknowledged.last == .lease(.shareAgain(afterWithdrawal: true)))
        #expect(!state.receive(.idleSweep(at: late, busy: [])).contains(.lease(.shareAgain(afterWithdrawal: true))))

        // Lost again before the withdrawal ends: not shared again when it ends.
        _ = state.receive(.exports(.available([Self.clock(on: "a", life: 2)])))
        #expect(state.receive(.lease(.unanswered(at: late + .seconds(60), reason: "timeout"))).contains(.lease(.withdrawExports)))
        _ = state.receive(.exports(.available([])))
        _ = state.receive(.lease(.kept(at: late + .seconds(60))))
        _ = state.receive(.lease(.unanswered(at: late + .seconds(120), reason: "timeout")))
        let ended = state.receive(Self.from(1, .withdrawAck(Self.clock(on: "a", life: 2).provider)))
        #expect(!ended.contains(.lease(.shareAgain(afterWithdrawal: true))), "\(ended)")
    }

    @Test("etcd mode: this node's deleted member key is put back only under a lease in force: registered, not degraded")
    func ownKeyRestoredUnderALiveLease() {
        var state = Self.etcd()
        let deleted = NodeState.Event.directory(.directoryChanged([.delete(key: EtcdDirectory.memberKey("a"), revision: 3)], revision: 3))
        #expect(!state.receive(deleted).contains(.discovery(.restoreOwnKey)))
        let now = ContinuousClock.now
        _ = state.receive(.lease(.registered(at: now)))
        #expect(state.receive(deleted).contains(.discovery(.restoreOwnKey)))
        _ = state.receive(.lease(.leaseNotFound))
        #expect(state.lease?.degraded != nil)
        #expect(!state.receive(deleted).contains(.discovery(.restoreOwnKey)))
        _ = state.receive(.reregistered(at: now, reason: "a new incarnation"))
        #expect(state.receive(deleted).contains(.discovery(.restoreOwnKey)))
    }

    @Test("Registered again as a new incarnation (etcd mode): every link to a member closes, those standing for one in order; drained duplicates close too; consoles stay")
    func reregisteredClosesMemberLinks() {
        var state = Self.etcd()
        _ = state.receive(Self.handshake(1, "b", "b1"))
        _ = state.receive(Self.handshake(2, "b", "b1"))
        _ = state.receive(Self.handshake(3, "c", "c1"))
        _ = state.receive(.established(session: 4, holder: .console(identity: "uid:0", role: nil)))
        #expect(state.drained == [2])
        let reason = "a registered again as a new incarnation"
        // Then what the new lease means, as a plain registration would say it: after the closes.
        let now = ContinuousClock.now
        var registered = state
        let leaseSays = registered.receive(.lease(.registered(at: now)))
        #expect(state.receive(.reregistered(at: now, reason: reason)) == [
            .link(.close(session: 1, reason: reason)), .link(.close(session: 3, reason: reason)),
            .link(.close(session: 2, reason: reason)),
        ] + leaseSays)
        #expect(state.receive(.link(.linkClosed(session: 1))).first == .memberLost(member: "b", incarnation: "b1", link: 1, inOrder: true))
        #expect(state.receive(.link(.linkClosed(session: 2))) == [])
        #expect(state.drained.isEmpty)
    }

    @Test("etcd mode: a withdrawal is told once its key is deleted; an acknowledgement before that counts for nothing, by life or by fiber; a deadline that passes first tells the members still awaited, then releases")
    func withdrawalToldAfterItsKey() {
        var state = Self.etcd()
        _ = state.receive(Self.handshake(1, "b", "b1"))
        let life1 = Self.clock(on: "a", life: 1)
        let life2 = Self.clock(on: "a", life: 2)
        _ = state.receive(.exports(.available([life1, life2])))
        #expect(state.receive(.keys(.reconcile)) == [
            .keys(.put(life: 1, key: EtcdDirectory.serviceKey(node: "a", life: 1), life1, attempt: 1)),
            .keys(.put(life: 2, key: EtcdDirectory.serviceKey(node: "a", life: 2), life2, attempt: 2)),
        ])
        _ = state.receive(.keys(.answered(life: 1, attempt: 1, succeeded: true)))
        _ = state.receive(.keys(.answered(life: 2, attempt: 2, succeeded: true)))
        // Life 1 leaves: its key is deleted first; b is not told yet.
        let leaving = state.receive(.exports(.available([life2])))
        #expect(leaving == [
            .keys(.delete(life: 1, key: EtcdDirectory.serviceKey(node: "a", life: 1), attempt: 3)),
            .exports(.armDeadline(life: 1, after: Self.withdrawTimeout)),
        ])
        #expect(state.receive(Self.from(1, .withdrawAck(life1.provider))) == [], "an acknowledgement of a withdrawal nobody was told")
        var byFiber = life1.provider
        byFiber.life = 0
        #expect(state.receive(Self.from(1, .withdrawAck(byFiber))) == [], "the same, from a peer that names the provider by fiber")
        #expect(state.receive(.keys(.answered(life: 1, attempt: 3, succeeded: true))) == [.exports(.withdraw(life1.provider, peers: ["b"]))])
        #expect(state.receive(Self.from(1, .withdrawAck(byFiber))) == [
            .exports(.cancelDeadline(life: 1)), .exports(.release(life1.provider, .finished(acknowledged: ["b"], lost: []))),
        ])
        // Life 2 leaves, and its deadline passes before etcd answers: b is told, then the teardown goes on.
        _ = state.receive(.exports(.available([])))
        #expect(state.receive(.exports(.deadlinePassed(life: 2))) == [
            .exports(.withdraw(life2.provider, peers: ["b"])),
            .exports(.release(life2.provider, .timedOut(awaiting: ["b"], acknowledged: []))),
        ])
        #expect(state.heldWithdrawals.isEmpty)
        // The delete's answer comes later: nothing more is told.
        #expect(state.receive(.keys(.answered(life: 2, attempt: 4, succeeded: true))) == [])
    }

    @Test("etcd mode: the lease thought lost tells a withdrawal waiting for its delete, and withdrawals from then on at once (their keys still deleted); a new registration leaves no key")
    func leaseThoughtLost() {
        var state = NodeState(
            name: "a", discovery: EtcdDirectory(name: "a"), interfaces: Self.interfaces, withdrawTimeout: Self.withdrawTimeout,
            leaseTTL: .seconds(2))
        let start = ContinuousClock.now
        _ = state.receive(.lease(.registered(at: start)))
        _ = state.receive(Self.handshake(1, "b", "b1"))
        let life1 = Self.clock(on: "a", life: 1)
        let life2 = Self.clock(on: "a", life: 2)
        _ = state.receive(.exports(.available([life1, life2])))
        _ = state.receive(.keys(.reconcile))
        _ = state.receive(.keys(.answered(life: 1, attempt: 1, succeeded: true)))
        _ = state.receive(.keys(.answered(life: 2, attempt: 2, succeeded: true)))
        _ = state.receive(.exports(.available([life2])))
        #expect(state.heldWithdrawals.keys.sorted() == [1])
        // etcd silent for less than the TTL: nothing changes.
        #expect(state.receive(.lease(.unanswered(at: start + .seconds(1), reason: "timeout"))) == [])
        // Past the TTL: the node degrades; the held withdrawal is told now, then the exports are withdrawn.
        let lost = state.receive(.lease(.unanswered(at: start + .seconds(3), reason: "timeout")))
        #expect(lost == [
            .lease(.degrade("etcd has not answered for longer than the lease (timeout)")),
            .exports(.withdraw(life1.provider, peers: ["b"])), .lease(.withdrawExports),
        ])
        #expect(state.heldWithdrawals.isEmpty)
        // Withdrawn while the lease is thought lost: told at once, and its key still deleted.
        let withdrawn = state.receive(.exports(.available([])))
        #expect(withdrawn.contains(.exports(.withdraw(life2.provider, peers: ["b"]))))
        #expect(withdrawn.contains(.keys(.delete(life: 2, key: EtcdDirectory.serviceKey(node: "a", life: 2), attempt: 4))))
        // etcd answers again, the lease lived: recovered; the exports are shared again once the withdrawals
        // still waiting for b end (see `sharedAgainAfterTheWithdrawals`).
        #expect(state.receive(.lease(.kept(at: start + .seconds(4)))) == [.lease(.recover)])
        #expect(state.sharesAgainAfterWithdrawals)
        // A registration under a new lease: no key counts as put.
        _ = state.receive(.lease(.registered(at: start + .seconds(5))))
        #expect(state.keys?.put.isEmpty == true)
    }

    @Test("etcd mode: a life withdrawn from nobody (no member linked) loses its key at once, even while the lease is thought lost")
    func keyOfALifeWithdrawnFromNobody() {
        var state = Self.etcd()
        let life1 = Self.clock(on: "a", life: 1)
        _ = state.receive(.exports(.available([life1])))
        _ = state.receive(.keys(.reconcile))
        _ = state.receive(.keys(.answered(life: 1, attempt: 1, succeeded: true)))
        _ = state.receive(.keys(.leaseLost))
        #expect(state.receive(.exports(.available([]))) == [
            .keys(.delete(life: 1, key: EtcdDirectory.serviceKey(node: "a", life: 1), attempt: 2)),
            .exports(.release(life1.provider, .noPeers)),
        ])
    }

    @Test("etcd mode: a delete etcd does not answer tells the withdrawal anyway and is tried again, as a scheduled event")
    func failedDeleteTriedAgain() {
        var state = Self.etcd()
        _ = state.receive(Self.handshake(1, "b", "b1"))
        let life1 = Self.clock(on: "a", life: 1)
        _ = state.receive(.exports(.available([life1])))
        _ = state.receive(.keys(.reconcile))
        _ = state.receive(.keys(.answered(life: 1, attempt: 1, succeeded: true)))
        _ = state.receive(.exports(.available([])))
        #expect(state.receive(.keys(.answered(life: 1, attempt: 2, succeeded: false))) == [
            .schedule(.keys(.retry(life: 1)), after: ServiceKeys.firstRetry),
            .exports(.withdraw(life1.provider, peers: ["b"])),
        ])
        #expect(state.receive(.keys(.retry(life: 1))) == [
            .keys(.delete(life: 1, key: EtcdDirectory.serviceKey(node: "a", life: 1), attempt: 3)),
        ])
    }

    @Test("etcd mode: a withdrawal told already goes again at once on a member's replaced link, even while its key's delete is being tried again")
    func toldWithdrawalSentAgainAtOnce() {
        var state = Self.etcd("b")
        _ = state.receive(Self.handshake(1, "a", "a1"))
        let life7 = Self.clock(on: "b", life: 7)
        _ = state.receive(.exports(.available([life7])))
        _ = state.receive(.keys(.reconcile))
        _ = state.receive(.keys(.answered(life: 7, attempt: 1, succeeded: true)))
        _ = state.receive(.exports(.available([])))
        // etcd does not answer the delete: a is told, and the delete is tried again (on its way now).
        #expect(state.receive(.keys(.answered(life: 7, attempt: 2, succeeded: false))).contains(.exports(.withdraw(life7.provider, peers: ["a"]))))
        _ = state.receive(.keys(.retry(life: 7)))
        // a closes the link in use as the duplicate; the other link takes over and is told again, at once.
        _ = state.receive(Self.from(1, .goodbye(reason: "a link to b already exists", duplicate: true)))
        let promoted = state.receive(Self.handshake(2, "a", "a1"))
        #expect(promoted.contains(.exports(.withdraw(life7.provider, peers: ["a"]))))
        #expect(state.heldWithdrawals.isEmpty)
        #expect(state.receive(Self.from(2, .withdrawAck(life7.provider))).contains(
            .exports(.release(life7.provider, .finished(acknowledged: ["a"], lost: [])))))
    }

    @Test("A dialler waits while the member at its address is linked, whoever dialled: an address the member advertises, or one a dial reached it at")
    func diallerWaitsForTheLinkInUse() {
        var state = NodeState(
            name: "a", discovery: MeshGossip(name: "a", ownAddresses: [], seeds: ["unix:/seed"]), interfaces: Self.interfaces,
            withdrawTimeout: Self.withdrawTimeout)
        _ = state.receive(.started)
        #expect(state.linkInUse(at: "unix:/seed") == nil)
        _ = state.receive(.dialled(attempt: 1, address: "unix:/seed", member: "c"))
        _ = state.receive(.link(.handshakeCompleted(
            session: 1, side: .responder, name: "c", incarnation: "c1", addresses: ["unix:/c.sock"])))
        #expect(state.linkInUse(at: "unix:/seed") == 1)
        #expect(state.linkInUse(at: "unix:/c.sock") == 1)
        #expect(state.linkInUse(at: "unix:/other.sock") == nil)
        _ = state.receive(.link(.linkClosed(session: 1)))
        #expect(state.linkInUse(at: "unix:/c.sock") == nil)
    }

    @Test("A withdrawal that began while a member's link was being replaced (closed as a duplicate, the other not up) is sent again on the link that takes over: the member is told, and acknowledges")
    func withdrawalToldOnTheReplacement() {
        var state = Self.mesh("b")
        _ = state.receive(Self.handshake(1, "a", "a1"))
        _ = state.receive(.exports(.available([Self.clock(on: "b", life: 7)])))
        // a closes the link in use as the duplicate; its other link is not up yet.
        _ = state.receive(Self.from(1, .goodbye(reason: "a link to b already exists", duplicate: true)))
        #expect(state.linkChoice(for: "a") == .wait)
        let provider = Self.clock(on: "b", life: 7).provider
        // The withdrawal goes to a, which has no link to send it on now.
        #expect(state.receive(.exports(.available([]))).contains(.exports(.withdraw(provider, peers: ["a"]))))
        #expect(state.linkChoice(for: "a") == .wait)
        // The replacement comes: the withdrawal goes on it.
        let promoted = state.receive(Self.handshake(2, "a", "a1"))
        #expect(promoted.contains(.link(.promote(session: 2, member: "a"))))
        #expect(promoted.contains(.exports(.withdraw(provider, peers: ["a"]))))
        #expect(state.receive(Self.from(2, .withdrawAck(provider))).contains(.exports(.release(provider, .finished(acknowledged: ["a"], lost: [])))))
    }
}

extension NodeState.Directive {
    /// Whether the directive refuses a `forget`.
    var isForgetRefusal: Bool {
        if case .forgetRefused = self { true } else { false }
    }
}
