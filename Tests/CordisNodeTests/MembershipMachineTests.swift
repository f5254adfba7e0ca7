@testable import CordisNode
import CordisProcessTesting
import CordisWire
import Testing

/// `Membership` on scripted event sequences: events in, directives asserted, no sockets.
@Suite("Membership: duplicate links, new incarnations, name conflicts")
struct MembershipMachineTests {
    static func handshake(
        _ session: Int, _ side: Handshake.Side, _ name: String, _ incarnation: String, addresses: [String] = []
    ) -> Membership.Event {
        .handshakeCompleted(session: session, side: side, name: name, incarnation: incarnation, addresses: addresses)
    }

    @Test("The side whose name sorts first closes a duplicate link of a live life; nothing else happens")
    func sortingFirstClosesTheDuplicate() {
        var view = Membership(name: "a")
        #expect(view.receive(Self.handshake(1, .responder, "b", "b1")) == [.adopt(session: 1, member: "b")])
        #expect(view.receive(Self.handshake(2, .initiator, "b", "b1")) == [.closeDuplicate(session: 2, member: "b")])
        #expect(view.receive(.linkClosed(session: 2)) == [])
        #expect(view.session(of: "b") == 1)
    }

    @Test("The other side keeps a duplicate as a standby that takes over without a withdrawal")
    func otherSideKeepsAStandby() {
        var view = Membership(name: "b")
        #expect(view.receive(Self.handshake(1, .initiator, "a", "a1")) == [.adopt(session: 1, member: "a")])
        #expect(view.receive(Self.handshake(2, .responder, "a", "a1")) == [.keepStandby(session: 2, member: "a")])
        // a closed the one b used first: the standby is the link now, no loss.
        #expect(view.receive(.linkClosed(session: 1)) == [.promote(session: 2, member: "a")])
        #expect(view.session(of: "a") == 2)
        #expect(view.receive(.linkClosed(session: 2)) == [.withdrawAll(member: "a", incarnation: "a1")])
        #expect(view.session(of: "a") == nil)
    }

    @Test("A new incarnation is refused while the live one is linked, and adopted once its link is gone")
    func newIncarnationWaitsForTheOldLink() {
        var view = Membership(name: "a")
        _ = view.receive(Self.handshake(1, .responder, "b", "b1"))
        #expect(view.receive(Self.handshake(2, .responder, "b", "b2")) == [
            .refuse(session: 2, reason: "a live member is named b (incarnation b1)"),
        ])
        #expect(view.receive(.linkClosed(session: 2)) == [])
        #expect(view.receive(.linkClosed(session: 1)) == [.withdrawAll(member: "b", incarnation: "b1")])
        #expect(view.receive(Self.handshake(3, .responder, "b", "b2")) == [.adopt(session: 3, member: "b", restarted: true)])
        #expect(view.members["b"]?.incarnation == "b2")
    }

    @Test("Overlapping handshakes for one name: the first adopted stays, the later ones are refused whatever their age")
    func overlappingHandshakes() {
        var view = Membership(name: "a")
        #expect(view.receive(Self.handshake(1, .responder, "x", "new")) == [.adopt(session: 1, member: "x")])
        #expect(view.receive(Self.handshake(2, .responder, "x", "old")) == [
            .refuse(session: 2, reason: "a live member is named x (incarnation new)"),
        ])
        #expect(view.session(of: "x") == 1)
    }

    @Test("A life adopted after another life of the same member is a restart; the same life linked again, or a member forgotten before, is not")
    func restarts() {
        var view = Membership(name: "a")
        #expect(view.receive(Self.handshake(1, .responder, "b", "b1")) == [.adopt(session: 1, member: "b")])
        _ = view.receive(.linkClosed(session: 1))
        #expect(view.receive(Self.handshake(2, .responder, "b", "b1")) == [.adopt(session: 2, member: "b")])
        _ = view.receive(.linkClosed(session: 2))
        #expect(view.receive(Self.handshake(3, .responder, "b", "b2")) == [.adopt(session: 3, member: "b", restarted: true)])
        _ = view.receive(.linkClosed(session: 3))
        _ = view.receive(.forgotten(name: "b"))
        #expect(view.receive(Self.handshake(4, .responder, "b", "b3")) == [.adopt(session: 4, member: "b")])
    }

    @Test("A peer claiming this node's own name is refused")
    func ownNameIsRefused() {
        var view = Membership(name: "a")
        #expect(view.receive(Self.handshake(1, .responder, "a", "other")) == [
            .refuse(session: 1, reason: "a uses this side's own name"),
        ])
        #expect(view.members.isEmpty)
    }

    @Test("Missed heartbeats close the link and end the life at once; a restart is then adopted")
    func heartbeatMissed() {
        var view = Membership(name: "a")
        _ = view.receive(Self.handshake(1, .responder, "b", "b1"))
        #expect(view.receive(.heartbeatMissed(session: 1)) == [
            .close(session: 1, reason: "no heartbeat from b"), .withdrawAll(member: "b", incarnation: "b1"),
        ])
        #expect(view.receive(.linkClosed(session: 1)) == [])
        #expect(view.receive(Self.handshake(2, .responder, "b", "b2")) == [.adopt(session: 2, member: "b", restarted: true)])
    }

    @Test("A life the discovery says is over closes every link of it, standbys included, and is lost at once; another life, or one with no link, closes nothing")
    func lifeEnded() {
        var view = Membership(name: "b")
        _ = view.receive(Self.handshake(1, .initiator, "a", "a1"))
        _ = view.receive(Self.handshake(2, .responder, "a", "a1"))
        #expect(view.receive(.lifeEnded(member: "a", incarnation: "a0", reason: "gone")) == [], "an earlier life")
        #expect(view.receive(.lifeEnded(member: "a", incarnation: "a1", reason: "a's etcd lease ended")) == [
            .close(session: 2, reason: "a's etcd lease ended"), .close(session: 1, reason: "a's etcd lease ended"),
            .withdrawAll(member: "a", incarnation: "a1"),
        ])
        #expect(view.session(of: "a") == nil)
        // The closes come back as link ends: nothing more, no standby is promoted.
        #expect(view.receive(.linkClosed(session: 1)) == [])
        #expect(view.receive(.linkClosed(session: 2)) == [])
        #expect(view.receive(.lifeEnded(member: "a", incarnation: "a1", reason: "again")) == [])
        #expect(view.receive(Self.handshake(3, .responder, "a", "a2")) == [.adopt(session: 3, member: "a", restarted: true)])
    }

    // MARK: - Randomised interleavings

    /// Two members a and b: links dialled either way, their two ends' events delivered in any order,
    /// b restarting; each side's directives carried out (a closed link reaches both ends later).
    struct Simulation {
        struct Pending {
            var atA: Bool
            var event: Membership.Event
        }

        var a = Membership(name: "a")
        var b = Membership(name: "b")
        var bLife = 1
        /// Open ends: link id -> (open at a, open at b, b's life on it).
        var open: [Int: (atA: Bool, atB: Bool, life: Int)] = [:]
        var pending: [Pending] = []
        /// b's timers armed by `awaitReplacement`: they fire only when nothing else is pending (a
        /// handshake under way completes within the timer's time).
        var timersAtB: [Membership.Event] = []
        var nextLink = 0
        /// Links dialled in b's current life (at most `Membership.maxStandbys` + 1, so b never has to
        /// close one itself).
        var linksOfLife = 0
        /// a's withdrawals of b's lives, the lives it adopted, and both in order.
        var withdrawnAtA: [String] = []
        var adoptedAtA: [String] = []
        var historyAtA: [String] = []
        var withdrawnAtB: [String] = []

        mutating func dial(initiatorIsA: Bool) {
            guard linksOfLife <= Membership.maxStandbys else { return }
            linksOfLife += 1
            nextLink += 1
            open[nextLink] = (true, true, bLife)
            pending.append(Pending(atA: true, event: .handshakeCompleted(
                session: nextLink, side: initiatorIsA ? .initiator : .responder, name: "b", incarnation: "b\(bLife)",
                addresses: [])))
            pending.append(Pending(atA: false, event: .handshakeCompleted(
                session: nextLink, side: initiatorIsA ? .responder : .initiator, name: "a", incarnation: "a1",
                addresses: [])))
        }

        mutating func restartB() {
            for (id, ends) in open where ends.life == bLife {
                open[id] = nil
                pending.removeAll { !$0.atA && $0.event.session == id }
                pending.append(Pending(atA: true, event: .linkClosed(session: id)))
            }
            pending.removeAll { !$0.atA }
            timersAtB = []
            b = Membership(name: "b")
            bLife += 1
            linksOfLife = 0
        }

        /// Delivers one pending event (any end, but each end's events of one link in order).
        mutating func deliver(using random: inout SeededGenerator) {
            let heads = pending.indices.filter { index in
                !pending[..<index].contains { $0.atA == pending[index].atA && $0.event.session == pending[index].event.session }
            }
            guard let index = heads.randomElement(using: &random) else {
                if !timersAtB.isEmpty {
                    for directive in b.receive(timersAtB.removeFirst()) { carryOut(directive, atA: false) }
                }
                return
            }
            let next = pending.remove(at: index)
            if next.atA {
                for directive in a.receive(next.event) { carryOut(directive, atA: true) }
            } else {
                let directives = b.receive(next.event)
                for directive in directives { carryOut(directive, atA: false) }
                // A duplicate goodbye b does not heed leaves the link open until a's drain deadline.
                if case .closedAsDuplicate(let id) = next.event, !directives.contains(where: { $0.isDrain }) { close(id) }
            }
        }

        mutating func carryOut(_ directive: Membership.Directive, atA: Bool) {
            switch directive {
            case .closeDuplicate(let id, _) where atA:
                // a says why in its goodbye and drains the link: b closes it once drained.
                if open[id] != nil { pending.append(Pending(atA: false, event: .closedAsDuplicate(session: id))) }
            case .refuse(let id, _), .closeDuplicate(let id, _), .close(let id, _), .drain(let id, _):
                close(id)
            case .awaitReplacement(let member, let closed):
                if !atA { timersAtB.append(.replacementOverdue(member: member, closed: closed)) }
            case .withdrawAll(_, let incarnation):
                if atA {
                    withdrawnAtA.append(incarnation)
                    historyAtA.append("-" + incarnation)
                } else {
                    withdrawnAtB.append(incarnation)
                }
            case .adopt(let id, _, _):
                if atA, let incarnation = a.members["b"]?.incarnation, a.session(of: "b") == id {
                    adoptedAtA.append(incarnation)
                    historyAtA.append("+" + incarnation)
                }
            default:
                break
            }
        }

        /// Closes a link: both ends learn it (each end's reader ends).
        mutating func close(_ id: Int) {
            guard open.removeValue(forKey: id) != nil else { return }
            pending.append(Pending(atA: true, event: .linkClosed(session: id)))
            pending.append(Pending(atA: false, event: .linkClosed(session: id)))
        }
    }

    @Test("Random interleavings of duplicate links and restarts: both sides agree on one link, duplicates never end a life, a life ends only after it began", arguments: 0 ..< 200)
    func randomInterleavings(seed: UInt64) {
        var random = SeededGenerator(seed: seed)
        var simulation = Simulation()
        var restarts = 0
        for _ in 0 ..< 60 {
            switch Int.random(in: 0 ..< 10, using: &random) {
            case 0 ..< 3:
                simulation.dial(initiatorIsA: Bool.random(using: &random))
            case 3 where restarts < 2 && seed % 2 == 1:
                restarts += 1
                simulation.restartB()
            default:
                simulation.deliver(using: &random)
            }
        }
        while !simulation.pending.isEmpty || !simulation.timersAtB.isEmpty { simulation.deliver(using: &random) }

        let atA = simulation.a.session(of: "b")
        let atB = simulation.b.session(of: "a")
        let life = "b\(simulation.bLife)"
        // Both sides use the same link, open at both ends, or neither has one.
        #expect(atA == atB, "seed \(seed): a uses \(String(describing: atA)), b uses \(String(describing: atB))")
        if let atA {
            #expect(simulation.open[atA] != nil, "seed \(seed): the link in use is closed")
            #expect(simulation.a.members["b"]?.incarnation == life)
            // The life a is linked to was never withdrawn: duplicates cost it nothing.
            #expect(!simulation.withdrawnAtA.contains(life), "seed \(seed): \(simulation.withdrawnAtA)")
        }
        if restarts == 0 {
            // Without restarts only duplicates come and go: the life is adopted once and never ends.
            #expect(simulation.withdrawnAtA.isEmpty, "seed \(seed): \(simulation.historyAtA)")
            #expect(simulation.adoptedAtA.count <= 1, "seed \(seed): \(simulation.historyAtA)")
            // Nor at b, whichever link a closed as the duplicate and whenever b's other link came up.
            #expect(simulation.withdrawnAtB.isEmpty, "seed \(seed): \(simulation.withdrawnAtB)")
        }
        // Per life, a adopts and withdraws in turn, starting with an adoption (a stale link of a life
        // a already lost may bring it back, as a healed partition would).
        for life in Set(simulation.historyAtA.map { String($0.dropFirst()) }) {
            let turns = simulation.historyAtA.filter { $0.dropFirst() == life }.map(\.first)
            let expected = turns.indices.map { $0 % 2 == 0 ? Character("+") : Character("-") }
            #expect(turns == expected.map { $0 }, "seed \(seed): \(simulation.historyAtA)")
        }
    }
}

extension Membership.Directive {
    /// Whether this is a `drain`.
    var isDrain: Bool {
        if case .drain = self { true } else { false }
    }
}

extension Membership.Event {
    /// The session the event is about (0 for events about no link).
    var session: Int {
        switch self {
        case .handshakeCompleted(let session, _, _, _, _), .linkClosed(let session), .heartbeatMissed(let session),
             .departed(let session), .closedAsDuplicate(let session), .replacementOverdue(_, let session):
            return session
        case .forgotten, .lifeEnded:
            return 0
        }
    }
}
