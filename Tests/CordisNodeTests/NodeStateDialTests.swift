@testable import CordisNode
import CordisDiscovery
import CordisWire
import Testing

/// `NodeState`'s dials: the mesh's kept addresses and etcd mode's links on demand, scripted.
@Suite("NodeState: which addresses are dialled, when, and what waits for a link")
struct NodeStateDialTests {
    static func seeded(_ seeds: [String]) -> NodeState {
        NodeState(
            name: "a", discovery: MeshGossip(name: "a", ownAddresses: [], seeds: seeds), interfaces: NodeStateTests.interfaces,
            withdrawTimeout: NodeStateTests.withdrawTimeout, reconnectBackoff: (.milliseconds(100), .seconds(1)))
    }

    @Test("The mesh: a seed is dialled, its link taken; the seed waits while the link is in use and is dialled again as soon as it ends")
    func meshSeed() {
        var state = Self.seeded(["unix:/seed"])
        #expect(state.receive(.started) == [.dial(attempt: 1, address: "unix:/seed")])
        #expect(state.receive(.dialled(attempt: 1, address: "unix:/seed", member: "b")) == [.adoptDialled(attempt: 1)])
        _ = state.receive(.link(.handshakeCompleted(session: 1, side: .initiator, name: "b", incarnation: "b1", addresses: [])))
        #expect(state.receive(.dialEnded(attempt: 1, session: 1, random: 1)).isEmpty)
        #expect(state.dials.waiting == ["unix:/seed"])
        #expect(state.receive(.link(.linkClosed(session: 1)))
            .contains(.dial(attempt: 2, address: "unix:/seed")))
    }

    @Test("The mesh: a failed dial, or one whose link this node refused, is tried again after a backoff (a timer event)")
    func meshBackoff() {
        var state = Self.seeded(["unix:/seed"])
        _ = state.receive(.started)
        #expect(state.receive(.dialEnded(attempt: 1, session: nil, random: 1))
            == [.schedule(.dialDue(address: "unix:/seed", attempt: 1), after: .milliseconds(100))])
        #expect(state.receive(.dialDue(address: "unix:/seed", attempt: 1)) == [.dial(attempt: 2, address: "unix:/seed")])
        // Reached a node that takes this node's own name: refused, so not kept.
        _ = state.receive(.dialled(attempt: 2, address: "unix:/seed", member: "a"))
        let refused = state.receive(.link(.handshakeCompleted(session: 1, side: .initiator, name: "a", incarnation: "x", addresses: [])))
        #expect(refused.contains { if case .link(.refuse(session: 1, _)) = $0 { true } else { false } })
        #expect(state.receive(.dialEnded(attempt: 2, session: 1, random: 1))
            == [.schedule(.dialDue(address: "unix:/seed", attempt: 2), after: .milliseconds(200))])
    }

    @Test("The mesh: an address whose member another link reached is not dialled while that link is in use")
    func meshLinkedByTheOther() {
        var state = Self.seeded([])
        _ = state.receive(.started)
        // b dialled this node: its handshake names its address, which is kept dialled, but not while b's
        // link is in use.
        let linked = state.receive(.link(.handshakeCompleted(
            session: 1, side: .responder, name: "b", incarnation: "b1", addresses: ["unix:/b"])))
        #expect(linked.allSatisfy { if case .dial = $0 { false } else { true } })
        #expect(state.dials.waiting == ["unix:/b"])
        #expect(state.receive(.link(.linkClosed(session: 1))).contains(.dial(attempt: 1, address: "unix:/b")))
    }

    static func etcdWithB(addresses: [String]) -> NodeState {
        var state = NodeStateTests.etcd()
        let member = EtcdKeyValue(
            key: EtcdDirectory.memberKey("b"),
            value: EtcdDirectory.memberValue(.init(name: "b", incarnation: "b1", addresses: addresses), version: "test"))
        _ = state.receive(.directory(.directoryListed([member], revision: 2)))
        return state
    }

    @Test("etcd mode: a call opens a link on demand; calls meanwhile wait; another node reached is closed and the next address tried; the link taken settles them")
    func onDemand() {
        var state = Self.etcdWithB(addresses: ["unix:/old", "unix:/b"])
        #expect(state.linkChoice(for: "b") == .open)
        #expect(state.receive(.linkWanted(member: "b")) == [.dial(attempt: 1, address: "unix:/old")])
        #expect(state.linkChoice(for: "b") == .wait)
        #expect(state.receive(.dialled(attempt: 1, address: "unix:/old", member: "x"))
            == [.discardDialled(attempt: 1, reason: "dialled b and reached x", goodbye: NodeState.idleReason)])
        #expect(state.receive(.dialEnded(attempt: 1, session: nil, random: 1)) == [.dial(attempt: 2, address: "unix:/b")])
        #expect(state.receive(.dialled(attempt: 2, address: "unix:/b", member: "b")) == [.adoptDialled(attempt: 2)])
        // The link is in use once adopted: what waited goes on at once.
        let adopted = state.receive(.link(.handshakeCompleted(
            session: 1, side: .initiator, name: "b", incarnation: "b1", addresses: ["unix:/b"])))
        #expect(adopted.contains(.linkSettled(member: "b")))
        #expect(state.receive(.dialEnded(attempt: 2, session: 1, random: 1)) == [.linkSettled(member: "b")])
        #expect(state.linkChoice(for: "b") == .use(1))
    }

    @Test("A call waits for a member's link at most twice: then it is unreachable, though a link may still be on its way; a link in use is taken whatever the count")
    func callWaitsAtMostTwice() {
        var state = Self.etcdWithB(addresses: ["unix:/b"])
        #expect(state.linkChoice(for: "b", waited: 0) == .open)
        #expect(state.linkChoice(for: "b", waited: 1) == .open)
        #expect(state.linkChoice(for: "b", waited: 2) == .unreachable)
        _ = state.receive(.linkWanted(member: "b"))
        #expect(state.linkChoice(for: "b", waited: 1) == .wait)
        #expect(state.linkChoice(for: "b", waited: NodeState.linkWaitsPerCall) == .unreachable)
        _ = state.receive(.dialled(attempt: 1, address: "unix:/b", member: "b"))
        _ = state.receive(.link(.handshakeCompleted(session: 1, side: .initiator, name: "b", incarnation: "b1", addresses: ["unix:/b"])))
        #expect(state.linkChoice(for: "b", waited: 2) == .use(1))
        #expect(state.linkChoice(for: "b", life: "b0", waited: 2) == .gone)
    }

    @Test("etcd mode: a dial on demand that reaches none of the addresses ends the wait without a link; one that fails while the member's link closes keeps the calls waiting for it")
    func onDemandFails() {
        var state = Self.etcdWithB(addresses: ["unix:/b"])
        _ = state.receive(.linkWanted(member: "b"))
        #expect(state.receive(.dialEnded(attempt: 1, session: nil, random: 1)) == [.linkSettled(member: "b")])
        #expect(state.linkChoice(for: "b") == .open)
        // No address etcd lists parses: nothing to dial.
        var garbled = Self.etcdWithB(addresses: ["nowhere"])
        #expect(garbled.receive(.linkWanted(member: "b")) == [.linkSettled(member: "b")])
        // A link from b comes and goes while the dial is on its way: the waiters wait for the dial.
        _ = state.receive(.linkWanted(member: "b"))
        _ = state.receive(NodeStateTests.handshake(1, "b", "b1"))
        #expect(!state.receive(.link(.linkClosed(session: 1))).contains(.linkSettled(member: "b")))
        #expect(state.receive(.dialEnded(attempt: 2, session: nil, random: 1)) == [.linkSettled(member: "b")])
    }

    @Test("etcd mode: the directory's re-dial of a failed link is a timer event; it dials unless the member is linked, and a failure goes back to the directory for the next")
    func redial() {
        var state = Self.etcdWithB(addresses: ["unix:/b"])
        _ = state.receive(NodeStateTests.handshake(1, "b", "b1"))
        let failed = state.receive(.link(.linkClosed(session: 1)))
        #expect(failed.contains(.schedule(.redialDue(member: "b", token: 1), after: .zero)))
        #expect(state.receive(.redialDue(member: "b", token: 1)) == [.dial(attempt: 2, address: "unix:/b")])
        let next = state.receive(.dialEnded(attempt: 2, session: nil, random: 1))
        #expect(next.first == .linkSettled(member: "b"))
        #expect(next.contains { if case .schedule(.redialDue(member: "b", token: 3), _) = $0 { true } else { false } })
        // Linked again before it is due: the re-dial does nothing.
        _ = state.receive(NodeStateTests.handshake(2, "b", "b1"))
        #expect(state.receive(.redialDue(member: "b", token: 3)).isEmpty)
    }
}
