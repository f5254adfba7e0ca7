@testable import CordisNode
import CordisWire
import Testing

/// `Admission`: links per console identity and the reserve for members and admins, as values.
@Suite("Admission: links per identity, and a reserve for members and admins")
struct AdmissionTests {
    @Test("a console identity holds at most its share; a slot comes back when one of its links ends")
    func perIdentity() {
        var admission = Admission(limits: Admission.Limits(total: 100, perConsoleIdentity: 3, reserve: 10))
        for session in 1...3 { #expect(admission.admit(session: session, .console(identity: "alice", role: .viewer)) == .admit) }
        #expect(admission.admit(session: 4, .console(identity: "alice", role: .viewer))
            == .refuse("alice already holds 3 console links, the most one identity may"))
        #expect(admission.admit(session: 5, .console(identity: "bob", role: .viewer)) == .admit)
        admission.release(session: 2)
        #expect(admission.admit(session: 6, .console(identity: "alice", role: .viewer)) == .admit)
        #expect(admission.consoleLinks == ["alice": 3, "bob": 1])
    }

    @Test("the last slots are kept for members and admins: viewers of many identities cannot take them")
    func reserve() {
        var admission = Admission(limits: Admission.Limits(total: 10, perConsoleIdentity: 5, reserve: 3))
        for session in 1...7 {
            #expect(admission.admit(session: session, .console(identity: "viewer\(session)", role: .viewer)) == .admit)
        }
        #expect(admission.admit(session: 8, .console(identity: "operator", role: .operator))
            == .refuse("the last 3 of this node's 10 links are kept for members and admins"))
        #expect(admission.admit(session: 9, .member("b")) == .admit)
        #expect(admission.admit(session: 10, .console(identity: "root", role: .admin)) == .admit)
        #expect(admission.admit(session: 11, .member("c")) == .admit)
        #expect(admission.admit(session: 12, .member("d")) == .refuse("this node holds 10 links, its limit"))
    }

    @Test("the default bounds follow the budget: 64 links an identity at most, a reserve of an eighth up to 64")
    func defaults() {
        #expect(Admission.Limits(total: 1024) == Admission.Limits(total: 1024, perConsoleIdentity: 64, reserve: 64))
        #expect(Admission.Limits(total: 64) == Admission.Limits(total: 64, perConsoleIdentity: 16, reserve: 8))
        #expect(Admission.Limits(total: 1).reserve == 0)
    }

    @Test("control work is budgeted per link and per console identity; a member's link gets the larger budget")
    func workBudgets() {
        var admission = Admission(limits: Admission.Limits(total: 100))
        #expect(admission.admit(session: 1, .console(identity: "alice", role: .viewer)) == .admit)
        #expect(admission.admit(session: 2, .member("b")) == .admit)
        #expect(admission.may(.request, session: 1, link: 63, identity: 63) == .admit)
        #expect(admission.may(.request, session: 1, link: 64, identity: 64)
            == .refuse("this link already has 64 requests running, the most one link may"))
        #expect(admission.may(.request, session: 1, link: 10, identity: 256)
            == .refuse("alice already has 256 requests running over all its links, the most one identity may"))
        #expect(admission.may(.follow, session: 1, link: 16, identity: 16)
            == .refuse("this link already has 16 follow subscriptions, the most one link may"))
        #expect(admission.may(.follow, session: 1, link: 3, identity: 64)
            == .refuse("alice already has 64 follow subscriptions over all its links, the most one identity may"))
        #expect(admission.may(.request, session: 2, link: 1023, identity: 1023) == .admit)
        #expect(admission.may(.request, session: 2, link: 1024, identity: 1024) != .admit)
        #expect(admission.may(.follow, session: 2, link: 255, identity: 255) == .admit)
        #expect(admission.consoleIdentity(of: 1) == "alice")
        #expect(admission.consoleIdentity(of: 2) == nil)
    }

    @Test("requests running are counted here: per link and per console identity, each finished one frees its place, a link's end frees all of its")
    func requestsRunning() {
        var limits = Admission.Limits(total: 100)
        limits.requestsPerLink = 2
        limits.requestsPerConsoleIdentity = 3
        var admission = Admission(limits: limits)
        _ = admission.admit(session: 1, .console(identity: "alice", role: .viewer))
        _ = admission.admit(session: 2, .console(identity: "alice", role: .viewer))
        _ = admission.admit(session: 3, .console(identity: "bob", role: .viewer))
        #expect(admission.startRequest(session: 1) == .admit)
        #expect(admission.startRequest(session: 1) == .admit)
        #expect(admission.startRequest(session: 1) == .refuse("this link already has 2 requests running, the most one link may"))
        #expect(admission.startRequest(session: 2) == .admit)
        #expect(admission.startRequest(session: 2)
            == .refuse("alice already has 3 requests running over all its links, the most one identity may"))
        #expect(admission.startRequest(session: 3) == .admit, "another identity has its own budget")
        admission.finishRequest(session: 1)
        #expect(admission.startRequest(session: 2) == .admit)
        #expect(admission.requestsRunning == [1: 1, 2: 2, 3: 1])
        // The link ends while its requests run: they no longer count, and their ends change nothing.
        admission.release(session: 2)
        admission.finishRequest(session: 2)
        #expect(admission.requestsRunning == [1: 1, 3: 1])
    }

    @Test("a console that leaves bytes unread loses its events past 256 KiB and its link past 1 MiB; a member only the connection's bound")
    func slowReaders() {
        var admission = Admission(limits: Admission.Limits(total: 100))
        #expect(admission.admit(session: 1, .console(identity: "alice", role: .viewer)) == .admit)
        #expect(admission.admit(session: 2, .member("b")) == .admit)
        #expect(admission.delivery(to: 1, backlog: 256 * 1024 - 1, event: true) == .send)
        #expect(admission.delivery(to: 1, backlog: 256 * 1024, event: true) == .lag(
            "alice fell behind: 262144 bytes wait to be sent, more than the 262144 a subscriber may leave unread"))
        #expect(admission.delivery(to: 1, backlog: 256 * 1024, event: false) == .send)
        #expect(admission.delivery(to: 1, backlog: 1024 * 1024, event: false) == .close(
            "alice is not reading: 1048576 bytes wait to be sent, more than the 1048576 a console may leave unread"))
        #expect(admission.delivery(to: 2, backlog: 15 * 1024 * 1024, event: true) == .send)
        #expect(admission.delivery(to: 3, backlog: 15 * 1024 * 1024, event: true) == .send)
    }

    @Test("NodeState: a refused member link and an ended console link give their slots back")
    func nodeStateReleases() {
        var state = NodeState(
            name: "a", discovery: MeshGossip(name: "a", ownAddresses: [], seeds: []), interfaces: [:],
            limits: Admission.Limits(total: 4, perConsoleIdentity: 1, reserve: 0), withdrawTimeout: .seconds(5))
        #expect(state.receive(.established(session: 1, holder: .console(identity: "x", role: nil))) == [])
        #expect(state.receive(.established(session: 2, holder: .console(identity: "x", role: nil)))
            == [.notAdmitted(session: 2, reason: "x already holds 1 console links, the most one identity may")])
        _ = state.receive(.link(.linkClosed(session: 1)))
        #expect(state.receive(.established(session: 3, holder: .console(identity: "x", role: nil))) == [])
        // A member link refused by Membership (a name conflict) frees its slot at once.
        _ = state.receive(.established(session: 4, holder: .member("a")))
        _ = state.receive(.link(.handshakeCompleted(session: 4, side: .responder, name: "a", incarnation: "z", addresses: [])))
        #expect(state.admission.holders.keys.sorted() == [3])
    }

    @Test("on a Unix socket only the node's own user and root may be members; without credentials (TCP) the handshake decides")
    func nodeRoleOnUnixSockets() {
        func peer(uid: UInt32) -> PeerCredentials { PeerCredentials(uid: uid, gid: 100, pid: 42) }
        #expect(Admission.mayHoldNodeRole(peer(uid: 1000), ownUID: 1000))
        #expect(Admission.mayHoldNodeRole(peer(uid: 0), ownUID: 1000))
        #expect(!Admission.mayHoldNodeRole(peer(uid: 1001), ownUID: 1000))
        #expect(!Admission.mayHoldNodeRole(peer(uid: 1000), ownUID: 0))
        #expect(Admission.mayHoldNodeRole(nil, ownUID: 1000))
    }
}

