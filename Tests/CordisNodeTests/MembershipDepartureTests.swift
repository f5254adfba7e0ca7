@testable import CordisNode
import CordisWire
import Testing

/// `Membership` and the mesh's discovery when a member says it leaves (`goodbye` with `leaving: true`),
/// driven the way the node drives them: the link rules first, then the discovery.
@Suite("Membership: a member that leaves is dropped from the view")
struct MembershipDepartureTests {
    @Test("A member leaving on its link in use is withdrawn, dropped, its standbys closed and its addresses no longer dialled")
    func leavingMemberIsDropped() {
        var links = Membership(name: "b")
        var view = MeshGossip(name: "b", ownAddresses: [], seeds: [])
        #expect(links.receive(MembershipMachineTests.handshake(1, .initiator, "a", "a1", addresses: ["unix:/tmp/a.sock"]))
            == [.adopt(session: 1, member: "a")])
        #expect(view.receive(.linked(member: "a", incarnation: "a1", addresses: ["unix:/tmp/a.sock"]))
            == [.sendMembers(to: "a"), .dial("unix:/tmp/a.sock")])
        #expect(links.receive(MembershipMachineTests.handshake(2, .responder, "a", "a1")) == [.keepStandby(session: 2, member: "a")])
        #expect(links.receive(.departed(session: 1)) == [
            .close(session: 2, reason: "a left the cluster"), .close(session: 1, reason: "a left the cluster"),
            .withdrawAll(member: "a", incarnation: "a1"),
        ])
        #expect(view.receive(.departed(member: "a")) == [
            .dropProxies(member: "a", incarnation: "a1"), .stopDialling("unix:/tmp/a.sock"),
        ])
        #expect(links.members["a"] == nil)
        #expect(view.known["a"] == nil)
        #expect(links.receive(.linkClosed(session: 1)) == [])
        #expect(links.receive(.linkClosed(session: 2)) == [])
        // Not forgotten: it may join again, and be learned again from gossip.
        #expect(links.receive(MembershipMachineTests.handshake(3, .initiator, "a", "a2")) == [.adopt(session: 3, member: "a")])
        #expect(!view.forgottenNames.contains("a"))
    }

    @Test("A leaving goodbye on a standby link, or from a link no member owns, changes nothing")
    func leavingOnAStandbyChangesNothing() {
        var links = Membership(name: "b")
        _ = links.receive(MembershipMachineTests.handshake(1, .initiator, "a", "a1"))
        _ = links.receive(MembershipMachineTests.handshake(2, .responder, "a", "a1"))
        #expect(links.receive(.departed(session: 2)) == [])
        #expect(links.receive(.departed(session: 9)) == [])
        #expect(links.session(of: "a") == 1)
    }

    @Test("A seed's address keeps being dialled after its member left")
    func seedsStayDialled() {
        var links = Membership(name: "b")
        var view = MeshGossip(name: "b", ownAddresses: [], seeds: ["unix:/tmp/a.sock"])
        #expect(view.receive(.started) == [.dial("unix:/tmp/a.sock")])
        _ = links.receive(MembershipMachineTests.handshake(1, .initiator, "a", "a1", addresses: ["unix:/tmp/a.sock"]))
        _ = view.receive(.linked(member: "a", incarnation: "a1", addresses: ["unix:/tmp/a.sock"]))
        #expect(links.receive(.departed(session: 1)) == [
            .close(session: 1, reason: "a left the cluster"), .withdrawAll(member: "a", incarnation: "a1"),
        ])
        #expect(view.receive(.departed(member: "a")) == [.dropProxies(member: "a", incarnation: "a1")])
    }
}
