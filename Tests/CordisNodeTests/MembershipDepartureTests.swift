@testable import CordisNode
import CordisWire
import Testing

/// `Membership` when a member says it leaves (`goodbye` with `leaving: true`).
@Suite("Membership: a member that leaves is dropped from the view")
struct MembershipDepartureTests {
    @Test("A member leaving on its link in use is withdrawn, dropped, its standbys closed and its addresses no longer dialled")
    func leavingMemberIsDropped() {
        var view = Membership(name: "b", ownAddresses: [], seeds: [])
        #expect(view.receive(MembershipMachineTests.handshake(1, .initiator, "a", "a1", addresses: ["unix:/tmp/a.sock"]))
            == [.adopt(session: 1, member: "a"), .dial("unix:/tmp/a.sock")])
        #expect(view.receive(MembershipMachineTests.handshake(2, .responder, "a", "a1")) == [.keepStandby(session: 2, member: "a")])
        #expect(view.receive(.departed(session: 1)) == [
            .close(session: 2, reason: "a left the cluster"), .close(session: 1, reason: "a left the cluster"),
            .withdrawAll(member: "a", incarnation: "a1"),
            .stopDialling("unix:/tmp/a.sock"),
        ])
        #expect(view.members["a"] == nil)
        #expect(view.receive(.linkClosed(session: 1)) == [])
        #expect(view.receive(.linkClosed(session: 2)) == [])
        // Not forgotten: it may join again.
        #expect(view.receive(MembershipMachineTests.handshake(3, .initiator, "a", "a2")) == [.adopt(session: 3, member: "a")])
    }

    @Test("A leaving goodbye on a standby link, or from a link no member owns, changes nothing")
    func leavingOnAStandbyChangesNothing() {
        var view = Membership(name: "b", ownAddresses: [], seeds: [])
        _ = view.receive(MembershipMachineTests.handshake(1, .initiator, "a", "a1"))
        _ = view.receive(MembershipMachineTests.handshake(2, .responder, "a", "a1"))
        #expect(view.receive(.departed(session: 2)) == [])
        #expect(view.receive(.departed(session: 9)) == [])
        #expect(view.session(of: "a") == 1)
    }

    @Test("A seed's address keeps being dialled after its member left")
    func seedsStayDialled() {
        var view = Membership(name: "b", ownAddresses: [], seeds: ["unix:/tmp/a.sock"])
        #expect(view.start() == [.dial("unix:/tmp/a.sock")])
        _ = view.receive(MembershipMachineTests.handshake(1, .initiator, "a", "a1", addresses: ["unix:/tmp/a.sock"]))
        #expect(view.receive(.departed(session: 1)) == [
            .close(session: 1, reason: "a left the cluster"), .withdrawAll(member: "a", incarnation: "a1"),
        ])
    }
}
