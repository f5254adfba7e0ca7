@testable import CordisNode
import CordisWire
import Testing

/// `Membership` when both nodes dial each other at once and the side that sorts first closes, as the
/// duplicate, the link the other side had taken into use. On each side the events are the two
/// handshakes (link 1 dialled by a, link 2 by b), a's close of one of them as the duplicate (its
/// `goodbye` then the close, on b) and the timer armed by `awaitReplacement`.
@Suite("Membership: the link in use closed as a duplicate")
struct MembershipDuplicateCloseTests {
    static func handshake(_ session: Int, _ side: Handshake.Side, _ name: String, _ incarnation: String) -> Membership.Event {
        .handshakeCompleted(session: session, side: side, name: name, incarnation: incarnation, addresses: [])
    }

    /// One of the four events on b's side.
    enum Step: CaseIterable {
        case handshake1, handshake2, duplicateClose, timer
    }

    /// Every order of `steps`.
    static func orders(_ steps: [Step]) -> [[Step]] {
        guard steps.count > 1 else { return [steps] }
        return steps.indices.flatMap { index in
            var rest = steps
            let first = rest.remove(at: index)
            return orders(rest).map { [first] + $0 }
        }
    }

    /// Plays `order` on b, a closing link `closed` as the duplicate: its close is heeded only once b's
    /// handshake on it completed (before, b's handshake of that link fails and b never sees it); the
    /// timer fires only if b armed it. Returns every directive.
    static func playOnB(_ order: [Step], closed: Int) -> (view: Membership, directives: [Membership.Directive]) {
        var view = Membership(name: "b")
        var directives: [Membership.Directive] = []
        var armed: [Membership.Event] = []
        var completed: Set<Int> = []
        for step in order {
            switch step {
            case .handshake1 where closed != 1 || !completed.contains(-1):
                completed.insert(1)
                directives += view.receive(handshake(1, .responder, "a", "a1"))
            case .handshake2 where closed != 2 || !completed.contains(-2):
                completed.insert(2)
                directives += view.receive(handshake(2, .initiator, "a", "a1"))
            case .handshake1, .handshake2:
                break
            case .duplicateClose:
                completed.insert(-closed)
                guard completed.contains(closed) else { break }
                directives += view.receive(.closedAsDuplicate(session: closed))
                directives += view.receive(.linkClosed(session: closed))
            case .timer:
                for event in armed { directives += view.receive(event) }
                armed = []
            }
            for case .awaitReplacement(let member, let session) in directives {
                let event = Membership.Event.replacementOverdue(member: member, closed: session)
                if !armed.contains(event) { armed.append(event) }
            }
        }
        return (view, directives)
    }

    /// b, whose link 1 to a (life a1) a closed as the duplicate before b's other link was up: waiting
    /// for its replacement.
    static func waitingForReplacement() -> Membership {
        var view = Membership(name: "b")
        _ = view.receive(handshake(1, .responder, "a", "a1"))
        _ = view.receive(.closedAsDuplicate(session: 1))
        _ = view.receive(.linkClosed(session: 1))
        return view
    }

    @Test("b adopted a's link, a closed it as the duplicate before b's own link was up: b's own link takes over without a withdrawal")
    func replacementAfterTheClose() {
        var view = Membership(name: "b")
        #expect(view.receive(Self.handshake(1, .responder, "a", "a1")) == [.adopt(session: 1, member: "a")])
        // Told at once: the link is drained (its calls still answered) and no longer stands for a.
        #expect(view.receive(.closedAsDuplicate(session: 1)) == [
            .drain(session: 1, member: "a"), .awaitReplacement(member: "a", closed: 1),
        ])
        #expect(view.member(of: 1) == nil)
        #expect(view.receive(.linkClosed(session: 1)) == [])
        #expect(view.receive(Self.handshake(2, .initiator, "a", "a1")) == [.promote(session: 2, member: "a")])
        #expect(view.session(of: "a") == 2)
        // The timer fires after the replacement: nothing happens.
        #expect(view.receive(.replacementOverdue(member: "a", closed: 1)) == [])
        #expect(view.session(of: "a") == 2)
    }

    @Test("Every order of the two handshakes, a's duplicate close of either link and the timer on b: no withdrawal, the other link stays")
    func everyOrderOnB() {
        for closed in [1, 2] {
            for order in Self.orders(Step.allCases) {
                let (view, directives) = Self.playOnB(order, closed: closed)
                let kept = closed == 1 ? 2 : 1
                let withdrawn = directives.filter { if case .withdrawAll = $0 { true } else { false } }
                // a closes a link only once it has the other, so the other's handshake on b comes; b
                // withdraws only when it came too late: b used the closed link alone (its handshake
                // before the close, the other's after) and the timer fired in between.
                let at = { (step: Step) in order.firstIndex(of: step) ?? 0 }
                let closedHandshake = at(closed == 1 ? .handshake1 : .handshake2)
                let keptHandshake = at(kept == 1 ? .handshake1 : .handshake2)
                let late = closedHandshake < at(.duplicateClose) && at(.duplicateClose) < at(.timer) && at(.timer) < keptHandshake
                #expect(withdrawn.count == (late ? 1 : 0), "closing \(closed), order \(order): \(directives)")
                #expect(view.session(of: "a") == kept, "closing \(closed), order \(order): \(directives)")
                #expect(view.members["a"]?.standbys == [], "closing \(closed), order \(order)")
            }
        }
    }

    @Test("The replacement never comes: the timer withdraws the member's services once; a later link is adopted as usual")
    func replacementNeverComes() {
        var view = Membership(name: "b")
        _ = view.receive(Self.handshake(1, .responder, "a", "a1"))
        #expect(view.receive(.closedAsDuplicate(session: 1)) == [
            .drain(session: 1, member: "a"), .awaitReplacement(member: "a", closed: 1),
        ])
        #expect(view.receive(.linkClosed(session: 1)) == [])
        #expect(view.session(of: "a") == nil)
        #expect(view.receive(.replacementOverdue(member: "a", closed: 1)) == [.withdrawAll(member: "a", incarnation: "a1")])
        #expect(view.receive(.replacementOverdue(member: "a", closed: 1)) == [])
        #expect(view.receive(Self.handshake(3, .initiator, "a", "a1")) == [.adopt(session: 3, member: "a")])
    }

    @Test("A new life of the member arrives while b waits for the replacement: the old life is withdrawn, then the new one adopted")
    func newLifeWhileWaiting() {
        var view = Self.waitingForReplacement()
        #expect(view.receive(Self.handshake(2, .initiator, "a", "a2")) == [
            .withdrawAll(member: "a", incarnation: "a1"), .adopt(session: 2, member: "a", restarted: true),
        ])
        #expect(view.receive(.replacementOverdue(member: "a", closed: 1)) == [])
        #expect(view.members["a"]?.incarnation == "a2")
    }

    @Test("A link closed without a duplicate goodbye, or after missed heartbeats, is lost at once as before")
    func otherClosesWithdrawAtOnce() {
        var view = Membership(name: "b")
        _ = view.receive(Self.handshake(1, .responder, "a", "a1"))
        #expect(view.receive(.linkClosed(session: 1)) == [.withdrawAll(member: "a", incarnation: "a1")])
        _ = view.receive(Self.handshake(2, .responder, "a", "a1"))
        #expect(view.receive(.heartbeatMissed(session: 2)) == [
            .close(session: 2, reason: "no heartbeat from a"), .withdrawAll(member: "a", incarnation: "a1"),
        ])
    }

    @Test("A duplicate goodbye from a member that sorts second is not heeded (only the side sorting first closes duplicates)")
    func duplicateGoodbyeFromTheSecondIsIgnored() {
        var view = Membership(name: "a")
        _ = view.receive(Self.handshake(1, .initiator, "b", "b1"))
        #expect(view.receive(.closedAsDuplicate(session: 1)) == [])
        #expect(view.receive(.linkClosed(session: 1)) == [.withdrawAll(member: "b", incarnation: "b1")])
    }

    @Test("a, sorting first, in either order of the two handshakes: adopts the first, closes the second, never withdraws")
    func sortingFirstEitherOrder() {
        for (first, second) in [(1, 2), (2, 1)] {
            var view = Membership(name: "a")
            let side: (Int) -> Handshake.Side = { $0 == 1 ? .initiator : .responder }
            #expect(view.receive(Self.handshake(first, side(first), "b", "b1")) == [.adopt(session: first, member: "b")])
            #expect(view.receive(Self.handshake(second, side(second), "b", "b1")) == [.closeDuplicate(session: second, member: "b")])
            #expect(view.receive(.linkClosed(session: second)) == [])
            #expect(view.session(of: "b") == first)
        }
    }

    @Test("Three members: a wait for one member's replacement leaves the others' links alone")
    func threeMembers() {
        var view = Membership(name: "c")
        _ = view.receive(Self.handshake(1, .responder, "a", "a1"))
        _ = view.receive(Self.handshake(2, .responder, "b", "b1"))
        #expect(view.receive(.closedAsDuplicate(session: 1)) == [
            .drain(session: 1, member: "a"), .awaitReplacement(member: "a", closed: 1),
        ])
        #expect(view.receive(.linkClosed(session: 1)) == [])
        #expect(view.receive(.replacementOverdue(member: "b", closed: 2)) == [])
        #expect(view.session(of: "b") == 2)
        #expect(view.receive(Self.handshake(3, .initiator, "b", "b1")) == [.keepStandby(session: 3, member: "b")])
        #expect(view.receive(Self.handshake(4, .initiator, "a", "a1")) == [.promote(session: 4, member: "a")])
        #expect(view.linkedNames == ["a", "b"])
    }

    @Test("The link in use closed as a duplicate while a standby is up: drained, the standby takes over; a standby closed so is only drained")
    func closedWithAStandby() {
        var view = Membership(name: "b")
        _ = view.receive(Self.handshake(1, .responder, "a", "a1"))
        #expect(view.receive(Self.handshake(2, .initiator, "a", "a1")) == [.keepStandby(session: 2, member: "a")])
        #expect(view.receive(Self.handshake(3, .initiator, "a", "a1")) == [.keepStandby(session: 3, member: "a")])
        #expect(view.receive(.closedAsDuplicate(session: 1)) == [.drain(session: 1, member: "a"), .promote(session: 2, member: "a")])
        #expect(view.receive(.closedAsDuplicate(session: 3)) == [.drain(session: 3, member: "a")])
        #expect(view.session(of: "a") == 2)
        #expect(view.members["a"]?.standbys == [])
        // The drained links' closes change nothing; a second duplicate goodbye on one is not heeded.
        #expect(view.receive(.closedAsDuplicate(session: 1)) == [])
        #expect(view.receive(.linkClosed(session: 1)) == [])
        #expect(view.receive(.linkClosed(session: 3)) == [])
        #expect(view.session(of: "a") == 2)
    }

    @Test("An operator's forget while b waits for the replacement does not drop the member (its wait ends first)")
    func forgetWhileWaiting() {
        var view = Self.waitingForReplacement()
        #expect(view.receive(.forgotten(name: "a")) == [])
        #expect(view.receive(.replacementOverdue(member: "a", closed: 1)) == [.withdrawAll(member: "a", incarnation: "a1")])
        _ = view.receive(.forgotten(name: "a"))
        #expect(view.members["a"] == nil)
    }
}
