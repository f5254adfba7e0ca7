@testable import Cordis
@testable import CordisNode
import CordisProcessTesting
import CordisWire
import Testing

/// `Exports` on scripted event sequences: events in, directives asserted, no sockets.
@Suite("Exports: announcements and withdrawals per provider life")
struct ExportsMachineTests {
    /// The withdrawal deadline the tests configure.
    static let timeout = Duration.seconds(3)

    static func clock(life: Int, fiber: Int = 7) -> ServiceAnnouncement {
        ServiceAnnouncement(
            service: "clock", realm: nil, interface: "ClockAPI", interfaceVersion: "v1", node: "a", fiber: fiber, life: life)
    }

    @Test("A provider life is announced to every peer, and to a peer linked later")
    func announce() {
        var exports = Exports(withdrawTimeout: Self.timeout)
        #expect(exports.receive(.peerLinked("b")) == [])
        #expect(exports.receive(.available([Self.clock(life: 1)])) == [
            .hold(Self.clock(life: 1).provider), .announce(Self.clock(life: 1), to: ["b"]),
        ])
        #expect(exports.receive(.available([Self.clock(life: 1)])) == [])
        #expect(exports.receive(.peerLinked("c")) == [.announce(Self.clock(life: 1), to: ["c"])])
    }

    @Test("A life that leaves is withdrawn from every peer and released once all acknowledged or were lost")
    func withdrawal() {
        var exports = Exports(withdrawTimeout: Self.timeout)
        _ = exports.receive(.peerLinked("b"))
        _ = exports.receive(.peerLinked("c"))
        _ = exports.receive(.available([Self.clock(life: 1)]))
        let provider = Self.clock(life: 1).provider
        #expect(exports.receive(.available([])) == [
            .withdraw(provider, peers: ["b", "c"]), .armDeadline(life: 1, after: Self.timeout),
        ])
        #expect(exports.receive(.acknowledged(provider, by: "b")) == [])
        #expect(exports.receive(.acknowledged(provider, by: "b")) == [])
        #expect(exports.receive(.peerLost("c")) == [
            .cancelDeadline(life: 1), .release(provider, .finished(acknowledged: ["b"], lost: ["c"])),
        ])
        #expect(!exports.isWithdrawing)
        #expect(exports.receive(.deadlinePassed(life: 1)) == [])
    }

    @Test("A change in one slot reconciles that slot only: other services and realms keep their exports")
    func slotChange() {
        var exports = Exports(withdrawTimeout: Self.timeout)
        _ = exports.receive(.peerLinked("b"))
        let blue = ServiceAnnouncement(
            service: "clock", realm: "blue", interface: "ClockAPI", interfaceVersion: "v1", node: "a", fiber: 8, life: 2)
        let counter = ServiceAnnouncement(
            service: "counter", realm: nil, interface: "CounterAPI", interfaceVersion: "v1", node: "a", fiber: 9, life: 3)
        _ = exports.receive(.available([Self.clock(life: 1), blue, counter]))
        // The root realm's clock leaves: only it is withdrawn.
        #expect(exports.receive(.slotChanged(service: "clock", realm: nil, available: [])) == [
            .withdraw(Self.clock(life: 1).provider, peers: ["b"]), .armDeadline(life: 1, after: Self.timeout),
        ])
        #expect(exports.export(life: 2) != nil && exports.export(life: 3) != nil)
        // A new life in the blue realm replaces the old one there; an announcement of another slot given
        // with it is ignored.
        let blueAgain = ServiceAnnouncement(
            service: "clock", realm: "blue", interface: "ClockAPI", interfaceVersion: "v1", node: "a", fiber: 8, life: 4)
        #expect(exports.receive(.slotChanged(service: "clock", realm: "blue", available: [blueAgain, Self.clock(life: 5)])) == [
            .withdraw(blue.provider, peers: ["b"]), .armDeadline(life: 2, after: Self.timeout),
            .hold(blueAgain.provider), .announce(blueAgain, to: ["b"]),
        ])
        #expect(exports.export(life: 5) == nil && exports.export(life: 3) != nil)
    }

    @Test("A late acknowledgement of an earlier life counts nothing for the current one")
    func lateAcknowledgement() {
        var exports = Exports(withdrawTimeout: Self.timeout)
        _ = exports.receive(.peerLinked("b"))
        _ = exports.receive(.available([Self.clock(life: 1)]))
        let first = Self.clock(life: 1).provider
        _ = exports.receive(.available([]))
        #expect(exports.receive(.deadlinePassed(life: 1)) == [
            .release(first, .timedOut(awaiting: ["b"], acknowledged: [])),
        ])
        // Provided again (same fiber, new life), and withdrawn again.
        _ = exports.receive(.available([Self.clock(life: 2)]))
        let second = Self.clock(life: 2).provider
        #expect(exports.receive(.available([])) == [.withdraw(second, peers: ["b"]), .armDeadline(life: 2, after: Self.timeout)])
        #expect(exports.receive(.acknowledged(first, by: "b")) == [])
        #expect(exports.isWithdrawing)
        #expect(exports.receive(.acknowledged(second, by: "b")) == [
            .cancelDeadline(life: 2), .release(second, .finished(acknowledged: ["b"], lost: [])),
        ])
    }

    @Test("A peer that predates lives acknowledges by service, realm and fiber")
    func legacyAcknowledgement() {
        var exports = Exports(withdrawTimeout: Self.timeout)
        _ = exports.receive(.peerLinked("b"))
        _ = exports.receive(.available([Self.clock(life: 3)]))
        _ = exports.receive(.available([]))
        let legacy = ServiceProvider(service: "clock", realm: nil, node: "a", fiber: 7)
        #expect(exports.receive(.acknowledged(legacy, by: "b")) == [
            .cancelDeadline(life: 3), .release(Self.clock(life: 3).provider, .finished(acknowledged: ["b"], lost: [])),
        ])
    }

    @Test("A life's teardown is held from the moment it is shared, peers or not; with no peers it is released as it leaves; a deadline releases a withdrawal with the silent peers named")
    func noPeersAndDeadline() {
        var exports = Exports(withdrawTimeout: Self.timeout)
        #expect(exports.receive(.available([Self.clock(life: 1)])) == [.hold(Self.clock(life: 1).provider)])
        #expect(exports.receive(.available([])) == [.release(Self.clock(life: 1).provider, .noPeers)])
        #expect(exports.export(life: 1) == nil)
        _ = exports.receive(.peerLinked("b"))
        _ = exports.receive(.available([Self.clock(life: 2)]))
        _ = exports.receive(.available([]))
        #expect(exports.receive(.deadlinePassed(life: 2)) == [
            .release(Self.clock(life: 2).provider, .timedOut(awaiting: ["b"], acknowledged: [])),
        ])
    }

    @Test("Stopping withdraws every export at once and announces nothing more")
    func stoppingWithdrawsEverythingTogether() {
        var exports = Exports(withdrawTimeout: Self.timeout)
        _ = exports.receive(.peerLinked("b"))
        _ = exports.receive(.peerLinked("c"))
        let counter = ServiceAnnouncement(
            service: "counter", realm: nil, interface: "CounterAPI", interfaceVersion: "v1", node: "a", fiber: 8, life: 2)
        _ = exports.receive(.available([Self.clock(life: 1), counter]))
        #expect(exports.receive(.stopping) == [
            .withdraw(Self.clock(life: 1).provider, peers: ["b", "c"]), .armDeadline(life: 1, after: Self.timeout),
            .withdraw(counter.provider, peers: ["b", "c"]), .armDeadline(life: 2, after: Self.timeout),
        ])
        #expect(exports.receive(.available([Self.clock(life: 1), counter, Self.clock(life: 5)])) == [])
        #expect(exports.receive(.deadlinePassed(life: 1)).count == 1)
        #expect(exports.receive(.deadlinePassed(life: 2)).count == 1)
        #expect(!exports.isWithdrawing)
    }

    @Test("Each withdrawal arms one deadline of the configured timeout, and an acknowledged one cancels it before the release")
    func deadlineArmedOnceAndCancelledByAcknowledgements() {
        var exports = Exports(withdrawTimeout: .milliseconds(1_250))
        _ = exports.receive(.peerLinked("b"))
        _ = exports.receive(.peerLinked("c"))
        _ = exports.receive(.available([Self.clock(life: 1)]))
        let provider = Self.clock(life: 1).provider
        #expect(exports.receive(.available([])) == [
            .withdraw(provider, peers: ["b", "c"]), .armDeadline(life: 1, after: .milliseconds(1_250)),
        ])
        // Nothing that leaves the withdrawal under way arms or cancels anything.
        #expect(exports.receive(.available([])) == [])
        #expect(exports.receive(.stopping) == [])
        #expect(exports.receive(.acknowledged(provider, by: "b")) == [])
        #expect(exports.receive(.acknowledged(provider, by: "c")) == [
            .cancelDeadline(life: 1), .release(provider, .finished(acknowledged: ["b", "c"], lost: [])),
        ])
    }

    @Test("A withdrawal ended by lost links cancels its deadline, and that deadline passing afterwards changes nothing")
    func deadlineCancelledByLostLinksThenIgnored() {
        var exports = Exports(withdrawTimeout: Self.timeout)
        _ = exports.receive(.peerLinked("b"))
        _ = exports.receive(.peerLinked("c"))
        _ = exports.receive(.available([Self.clock(life: 1)]))
        _ = exports.receive(.available([Self.clock(life: 2)]))
        let provider = Self.clock(life: 1).provider
        #expect(exports.receive(.peerLost("b")) == [])
        #expect(exports.receive(.peerLost("c")) == [
            .cancelDeadline(life: 1), .release(provider, .finished(acknowledged: [], lost: ["b", "c"])),
        ])
        let before = exports.exports
        #expect(exports.receive(.deadlinePassed(life: 1)) == [])
        #expect(exports.exports == before && !exports.isWithdrawing)
        #expect(exports.export(life: 2)?.withdrawal == nil)
    }

    @Test("A timed-out withdrawal is released once and asks to cancel no deadline: the one that fired")
    func timedOutReleasesOnceWithoutCancel() {
        var exports = Exports(withdrawTimeout: Self.timeout)
        _ = exports.receive(.peerLinked("b"))
        _ = exports.receive(.available([Self.clock(life: 1)]))
        _ = exports.receive(.stopping)
        let provider = Self.clock(life: 1).provider
        #expect(exports.receive(.deadlinePassed(life: 1)) == [.release(provider, .timedOut(awaiting: ["b"], acknowledged: []))])
        #expect(exports.receive(.deadlinePassed(life: 1)) == [])
        #expect(exports.receive(.acknowledged(provider, by: "b")) == [])
        #expect(exports.receive(.peerLost("b")) == [])
        #expect(!exports.isWithdrawing)
    }

    /// A life of two services: `clock` for odd lives, `counter` for even ones.
    static func either(life: Int) -> ServiceAnnouncement {
        var announcement = clock(life: life)
        if life % 2 == 0 { announcement.service = "counter" }
        return announcement
    }

    @Test("Random sequences over two services, changed all at once or one slot at a time, lives shared again after their release: a life is held while shared or withdrawn, and released once per hold, after its withdrawal or at once with no peers; every armed deadline is cancelled or fires exactly once; the lives by slot stay the exports'", arguments: 0 ..< 200)
    func randomSequences(seed: UInt64) {
        var random = SeededGenerator(seed: seed)
        var exports = Exports(withdrawTimeout: Self.timeout)
        // Per life: holds, releases, withdrawals begun, and the deadlines that ended (with how).
        var held: [Int: Int] = [:]
        var released: [Int: Int] = [:]
        var withdrawn: [Int: Int] = [:]
        var withdrawing: Set<Int> = []
        var armed: Set<Int> = []
        var deadlinesEnded: [Int: [String]] = [:]
        var problems: [String] = []
        var available: Set<Int> = []
        var left: [Int] = []
        var nextLife = 0
        let peers = ["b", "c", "d"]
        func apply(_ directives: [Exports.Directive]) {
            for directive in directives {
                switch directive {
                case .hold(let provider):
                    let life = provider.life
                    if held[life, default: 0] != released[life, default: 0] { problems.append("life \(life) held while already held") }
                    held[life, default: 0] += 1
                case .withdraw(let provider, let told):
                    let life = provider.life
                    if withdrawing.contains(life) {
                        // Sent again to a peer still owing its acknowledgement (linked again).
                        let awaiting = exports.export(life: life)?.withdrawal?.awaiting ?? []
                        if !Set(told).isSubset(of: awaiting) { problems.append("life \(life) sent again to \(told), awaiting \(awaiting)") }
                    } else {
                        withdrawing.insert(life)
                        withdrawn[life, default: 0] += 1
                    }
                case .armDeadline(let life, let delay):
                    if delay != Self.timeout { problems.append("life \(life) armed for \(delay)") }
                    if !armed.insert(life).inserted { problems.append("life \(life) armed twice") }
                case .cancelDeadline(let life):
                    if armed.remove(life) == nil { problems.append("life \(life) cancelled, not armed") }
                    deadlinesEnded[life, default: []].append("cancelled")
                case .release(let provider, let outcome):
                    let life = provider.life
                    released[life, default: 0] += 1
                    if released[life, default: 0] > held[life, default: 0] { problems.append("life \(life) released while not held") }
                    if armed.contains(life) { problems.append("life \(life) released with its deadline armed") }
                    // Told to nobody: released as it leaves; else once its withdrawal ends.
                    if (withdrawing.remove(life) == nil) != (outcome == .noPeers) {
                        problems.append("life \(life) released \(outcome) with a withdrawal under way or none")
                    }
                case .announce: break
                }
            }
        }
        // The deadline of `life` passes: the timer fires only while it is armed (a cancelled one never does).
        func deadlinePasses(_ life: Int) {
            if armed.remove(life) != nil { deadlinesEnded[life, default: []].append("fired") }
            apply(exports.receive(.deadlinePassed(life: life)))
        }
        // What changed, as the node tells it: every available life, or those of the slot that changed.
        func changed(_ life: Int?) -> Exports.Event {
            let all = available.sorted().map { Self.either(life: $0) }
            guard let life, Bool.random(using: &random) else { return .available(all) }
            let service = Self.either(life: life).service
            return .slotChanged(service: service, realm: nil, available: all.filter { $0.service == service })
        }
        for _ in 0 ..< 80 {
            let event: Exports.Event?
            switch Int.random(in: 0 ..< 9, using: &random) {
            case 0:
                nextLife += 1
                available.insert(nextLife)
                event = changed(nextLife)
            case 1:
                let life = available.randomElement(using: &random)
                if let life {
                    available.remove(life)
                    left.append(life)
                }
                event = changed(life)
            case 2:
                // A life that left is shared again (its provider's check passed again, the lease came back).
                let life = left.randomElement(using: &random)
                if let life { available.insert(life) }
                event = changed(life)
            case 3: event = .peerLinked(peers.randomElement(using: &random) ?? "b")
            case 4: event = .peerLost(peers.randomElement(using: &random) ?? "b")
            case 5:
                // The timer of an armed deadline fires, or one fed late (its withdrawal ended, or none).
                let late = Int.random(in: 0 ... max(1, nextLife), using: &random)
                if Bool.random(using: &random), let life = armed.randomElement(using: &random) {
                    deadlinePasses(life)
                } else if !armed.contains(late) {
                    let before = exports.exports
                    let directives = exports.receive(.deadlinePassed(life: late))
                    #expect(directives.isEmpty && exports.exports == before, "seed \(seed): a late deadline of \(late) changed things")
                }
                event = nil
            default:
                let life = Int.random(in: 0 ... max(1, nextLife), using: &random)
                event = .acknowledged(Self.either(life: life).provider, by: peers.randomElement(using: &random) ?? "b")
            }
            if let event { apply(exports.receive(event)) }
            if !exports.slotsMatchExports { problems.append("the lives by slot are not the exports' after \(String(describing: event))") }
        }
        apply(exports.receive(.stopping))
        for life in armed.sorted() { deadlinePasses(life) }
        #expect(!exports.isWithdrawing && withdrawing.isEmpty, "seed \(seed)")
        // Every hold was released once, and nothing else was.
        #expect(held == released, "seed \(seed): held \(held), released \(released)")
        // Every armed deadline was cancelled or fired, exactly once per withdrawal.
        #expect(armed.isEmpty, "seed \(seed): deadlines left armed \(armed.sorted())")
        #expect(deadlinesEnded.mapValues(\.count) == withdrawn, "seed \(seed): deadlines ended \(deadlinesEnded), withdrawn \(withdrawn)")
        #expect(problems.isEmpty, "seed \(seed): \(problems)")
    }

    @Test("Only an ordinary, available, remote-capable provider outside a private realm is shared, and only while sharing")
    func sharingRule() {
        #expect(Exports.shares(isFallback: false, isAvailable: true, sharing: true))
        #expect(!Exports.shares(isFallback: true, isAvailable: true, sharing: true))
        #expect(!Exports.shares(isFallback: false, isAvailable: false, sharing: true))
        #expect(!Exports.shares(isFallback: false, isAvailable: true, sharing: false))
        #expect(Exports.announcedRealm(of: .root, remoteCapable: true) == .some(nil))
        #expect(Exports.announcedRealm(of: .label("eu"), remoteCapable: true) == .some("eu"))
        #expect(Exports.announcedRealm(of: .private(3, name: "foo"), remoteCapable: true) == nil)
        #expect(Exports.announcedRealm(of: .root, remoteCapable: false) == nil)
        #expect(Exports.announcedRealm(of: .label("eu"), remoteCapable: false) == nil)
    }

    @Test("The lives still serving while withdrawn are those of the service and realm whose withdrawal is under way")
    func withdrawingLives() {
        var exports = Exports(withdrawTimeout: Self.timeout)
        _ = exports.receive(.peerLinked("b"))
        var eu = Self.clock(life: 3)
        eu.realm = "eu"
        _ = exports.receive(.available([Self.clock(life: 1), Self.clock(life: 2), eu]))
        #expect(exports.withdrawingLives(of: "clock", in: nil) == [])
        _ = exports.receive(.available([Self.clock(life: 2)]))
        #expect(exports.withdrawingLives(of: "clock", in: nil) == [1])
        #expect(exports.withdrawingLives(of: "clock", in: "eu") == [3])
        #expect(exports.withdrawingLives(of: "counter", in: nil) == [])
        _ = exports.receive(.acknowledged(Self.clock(life: 1).provider, by: "b"))
        #expect(exports.withdrawingLives(of: "clock", in: nil) == [])
    }
}
