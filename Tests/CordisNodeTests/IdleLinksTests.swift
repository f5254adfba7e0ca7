@testable import CordisNode
import Testing

/// `IdleLinks`, which of a node's etcd-mode links are idle and close: uses and sweeps in, closes out,
/// on scripted instants.
@Suite("The idle-link rule: which links close as idle")
struct IdleLinksTests {
    static let start = ContinuousClock.now

    static func at(_ milliseconds: Int) -> ContinuousClock.Instant { start + .milliseconds(milliseconds) }

    static func sweep(_ milliseconds: Int, linked: Set<String> = ["b"], busy: Set<String> = []) -> IdleLinks.Event {
        .sweep(at: at(milliseconds), linked: linked, busy: busy)
    }

    @Test("a link used within the timeout is kept")
    func recentlyUsedIsKept() {
        var idle = IdleLinks(timeout: .seconds(1))
        #expect(idle.receive(.used(member: "b", at: Self.at(0))) == [])
        #expect(idle.receive(Self.sweep(500)) == [])
        #expect(idle.receive(.used(member: "b", at: Self.at(900))) == [])
        #expect(idle.receive(Self.sweep(1_500)) == [])
        #expect(idle.receive(Self.sweep(1_900)) == [])
        #expect(idle.lastUse["b"] == Self.at(900))
    }

    @Test("a link idle past the timeout closes once, and its last use is forgotten")
    func idlePastTheTimeoutClosesOnce() {
        var idle = IdleLinks(timeout: .seconds(1))
        _ = idle.receive(.used(member: "b", at: Self.at(0)))
        _ = idle.receive(.used(member: "c", at: Self.at(800)))
        // Exactly the timeout is not past it.
        #expect(idle.receive(Self.sweep(1_000, linked: ["b", "c"])) == [])
        #expect(idle.receive(Self.sweep(1_001, linked: ["b", "c"])) == [.close(member: "b")])
        #expect(idle.lastUse["b"] == nil)
        // The link is gone before the next sweep: it closes no second time.
        #expect(idle.receive(.unlinked(member: "b")) == [])
        #expect(idle.receive(Self.sweep(1_500, linked: ["c"])) == [])
        #expect(idle.receive(Self.sweep(1_900, linked: ["c"])) == [.close(member: "c")])
        #expect(idle.lastUse.isEmpty)
    }

    @Test("a busy link is kept however long idle, and closes at the first sweep after it is no longer busy")
    func busyIsKeptUntilFree() {
        var idle = IdleLinks(timeout: .seconds(1))
        _ = idle.receive(.used(member: "b", at: Self.at(0)))
        for milliseconds in stride(from: 500, through: 60_000, by: 500) {
            #expect(idle.receive(Self.sweep(milliseconds, busy: ["b"])) == [])
        }
        #expect(idle.lastUse["b"] == Self.at(0))
        #expect(idle.receive(Self.sweep(60_500)) == [.close(member: "b")])
    }

    @Test("a use after a close starts afresh")
    func useAfterCloseStartsAfresh() {
        var idle = IdleLinks(timeout: .seconds(1))
        _ = idle.receive(.used(member: "b", at: Self.at(0)))
        #expect(idle.receive(Self.sweep(1_500)) == [.close(member: "b")])
        // The next call opens a new link and uses it.
        #expect(idle.receive(.used(member: "b", at: Self.at(5_000))) == [])
        #expect(idle.receive(Self.sweep(5_500)) == [])
        #expect(idle.receive(Self.sweep(6_000)) == [])
        #expect(idle.receive(Self.sweep(6_001)) == [.close(member: "b")])
    }

    @Test("a member first seen at a sweep counts as used then: it is not closed before a whole timeout")
    func firstSeenAtASweep() {
        var idle = IdleLinks(timeout: .seconds(1))
        // Linked (by the other side, or a dial) but never used by a call here.
        #expect(idle.receive(Self.sweep(10_000)) == [])
        #expect(idle.lastUse["b"] == Self.at(10_000))
        #expect(idle.receive(Self.sweep(10_500)) == [])
        #expect(idle.receive(Self.sweep(11_000)) == [])
        #expect(idle.receive(Self.sweep(11_500)) == [.close(member: "b")])
    }

    @Test("a use for a member with no link closes nothing until a link is seen at a sweep")
    func unlinkedUseClosesNothing() {
        var idle = IdleLinks(timeout: .seconds(1))
        _ = idle.receive(.used(member: "b", at: Self.at(0)))
        #expect(idle.receive(Self.sweep(5_000, linked: [])) == [])
        // The link that comes later counts from the recorded use.
        #expect(idle.receive(Self.sweep(5_500)) == [.close(member: "b")])
    }
}
