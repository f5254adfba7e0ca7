@testable import CordisNode
import CordisWire
import Testing

/// `Dials`: when a kept address is dialled, and how links open on demand, events in and directives out.
@Suite("Dials: kept addresses back off and wait while linked; links on demand dial one member at a time")
struct DialsTests {
    static func check(_ dials: inout Dials, _ event: Dials.Event) -> [Dials.Directive] { dials.receive(event) }

    @Test("A kept address is dialled at once; each failure backs off twice as long, jittered, up to the maximum; the backoff's end dials again")
    func keptAddressBacksOff() {
        var dials = Dials(backoff: (.milliseconds(100), .milliseconds(400)))
        #expect(Self.check(&dials, .keep(address: "unix:/b", linked: false)) == [.connect(attempt: 1, address: "unix:/b")])
        // random 1 is the whole step; 0 half of it.
        #expect(Self.check(&dials, .ended(attempt: 1, kept: false, linked: false, random: 1))
            == [.backOff(address: "unix:/b", attempt: 1, after: .milliseconds(100))])
        #expect(Self.check(&dials, .due(address: "unix:/b", attempt: 1, linked: false)) == [.connect(attempt: 2, address: "unix:/b")])
        #expect(Self.check(&dials, .ended(attempt: 2, kept: false, linked: false, random: 0))
            == [.backOff(address: "unix:/b", attempt: 2, after: .milliseconds(100))])
        _ = Self.check(&dials, .due(address: "unix:/b", attempt: 2, linked: false))
        #expect(Self.check(&dials, .ended(attempt: 3, kept: false, linked: false, random: 1))
            == [.backOff(address: "unix:/b", attempt: 3, after: .milliseconds(400))])
        _ = Self.check(&dials, .due(address: "unix:/b", attempt: 3, linked: false))
        #expect(Self.check(&dials, .ended(attempt: 4, kept: false, linked: false, random: 1))
            == [.backOff(address: "unix:/b", attempt: 4, after: .milliseconds(400))])
    }

    @Test("A dial whose link is kept resets the backoff; the address then waits while the link is in use, and is dialled at once when it ends")
    func keptLinkWaits() {
        var dials = Dials(backoff: (.milliseconds(100), .seconds(2)))
        _ = Self.check(&dials, .keep(address: "unix:/b", linked: false))
        _ = Self.check(&dials, .ended(attempt: 1, kept: false, linked: false, random: 1))
        _ = Self.check(&dials, .due(address: "unix:/b", attempt: 1, linked: false))
        #expect(Self.check(&dials, .reached(attempt: 2, member: "b")) == [.adopt(attempt: 2)])
        #expect(Self.check(&dials, .ended(attempt: 2, kept: true, linked: true, random: 1)).isEmpty)
        #expect(dials.waiting == ["unix:/b"])
        #expect(Self.check(&dials, .unlinked(address: "unix:/b")) == [.connect(attempt: 3, address: "unix:/b")])
        // Reset: the next failure backs off by the first step again.
        #expect(Self.check(&dials, .ended(attempt: 3, kept: false, linked: false, random: 1))
            == [.backOff(address: "unix:/b", attempt: 3, after: .milliseconds(100))])
    }

    @Test("An address whose member is linked already waits, and a link refused here backs off like a failure")
    func linkedAndRefused() {
        var dials = Dials()
        #expect(Self.check(&dials, .keep(address: "unix:/b", linked: true)).isEmpty)
        #expect(dials.waiting == ["unix:/b"])
        // Only an address that waits is dialled when the link ends; a backoff's end while linked waits.
        #expect(Self.check(&dials, .unlinked(address: "unix:/c")).isEmpty)
        #expect(Self.check(&dials, .unlinked(address: "unix:/b")) == [.connect(attempt: 1, address: "unix:/b")])
        #expect(Self.check(&dials, .ended(attempt: 1, kept: false, linked: true, random: 1))
            == [.backOff(address: "unix:/b", attempt: 1, after: .milliseconds(50))])
        #expect(Self.check(&dials, .due(address: "unix:/b", attempt: 1, linked: true)).isEmpty)
        #expect(dials.waiting == ["unix:/b"])
    }

    @Test("Reports of an attempt no longer waited for count for nothing: an address stopped, a backoff from before, a dial reached after its address stopped is closed; an address kept again goes on with its dial on its way")
    func staleReports() {
        var dials = Dials()
        _ = Self.check(&dials, .keep(address: "unix:/b", linked: false))
        _ = Self.check(&dials, .stop(address: "unix:/b"))
        #expect(Self.check(&dials, .reached(attempt: 1, member: "b")) == [.discard(attempt: 1, reason: "stopped dialling")])
        #expect(Self.check(&dials, .ended(attempt: 1, kept: false, linked: false, random: 1)).isEmpty)
        // Kept again: a new attempt; the old one's end and an old backoff change nothing.
        #expect(Self.check(&dials, .keep(address: "unix:/b", linked: false)) == [.connect(attempt: 2, address: "unix:/b")])
        #expect(Self.check(&dials, .ended(attempt: 1, kept: false, linked: false, random: 1)).isEmpty)
        #expect(Self.check(&dials, .due(address: "unix:/b", attempt: 1, linked: false)).isEmpty)
        #expect(Self.check(&dials, .keep(address: "unix:/b", linked: false)).isEmpty, "an address kept twice is dialled once")
        #expect(dials.keptAddress(of: 2) == "unix:/b")
        // Stopped and kept again while its dial is on its way: that dial goes on, no second one starts.
        _ = Self.check(&dials, .stop(address: "unix:/b"))
        #expect(Self.check(&dials, .keep(address: "unix:/b", linked: false)).isEmpty)
        #expect(Self.check(&dials, .reached(attempt: 2, member: "b")) == [.adopt(attempt: 2)])
    }

    @Test("On demand: one dial per member at a time, its addresses in order; another node reached is closed and the next address tried; the wait ends with a link or when none is left")
    func onDemand() {
        var dials = Dials()
        #expect(Self.check(&dials, .open(member: "b", addresses: ["unix:/b1", "unix:/b2"], redial: false))
            == [.connect(attempt: 1, address: "unix:/b1")])
        #expect(dials.isOpening("b"))
        #expect(Self.check(&dials, .open(member: "b", addresses: ["unix:/b1", "unix:/b2"], redial: false)).isEmpty)
        #expect(Self.check(&dials, .reached(attempt: 1, member: "x")) == [.discard(attempt: 1, reason: "dialled b and reached x")])
        #expect(Self.check(&dials, .ended(attempt: 1, kept: false, linked: false, random: 1)) == [.connect(attempt: 2, address: "unix:/b2")])
        #expect(Self.check(&dials, .reached(attempt: 2, member: "b")) == [.adopt(attempt: 2)])
        #expect(Self.check(&dials, .ended(attempt: 2, kept: true, linked: false, random: 1)) == [.opened(member: "b")])
        #expect(!dials.isOpening("b"))
        // No address reaches it: the wait ends without a link; with none known, at once.
        _ = Self.check(&dials, .open(member: "b", addresses: ["unix:/b1"], redial: false))
        #expect(Self.check(&dials, .ended(attempt: 3, kept: false, linked: false, random: 1)) == [.opened(member: "b")])
        #expect(Self.check(&dials, .open(member: "d", addresses: [], redial: false)) == [.opened(member: "d")])
    }

    @Test("A re-dial replaces one not made yet; it dials only a member with no link in use or on its way, and one that ends without a link is reported")
    func redials() {
        var dials = Dials()
        #expect(Self.check(&dials, .redial(member: "b", after: .zero)) == [.redialLater(member: "b", token: 1, after: .zero)])
        #expect(Self.check(&dials, .redial(member: "b", after: .seconds(1))) == [.redialLater(member: "b", token: 2, after: .seconds(1))])
        #expect(Self.check(&dials, .redialDue(member: "b", token: 1, addresses: ["unix:/b"], linked: false)).isEmpty)
        #expect(Self.check(&dials, .redialDue(member: "b", token: 2, addresses: ["unix:/b"], linked: false))
            == [.connect(attempt: 3, address: "unix:/b")])
        #expect(Self.check(&dials, .ended(attempt: 3, kept: false, linked: false, random: 0.25))
            == [.opened(member: "b"), .redialFailed(member: "b", random: 0.25)])
        // Linked by then: nothing to do.
        _ = Self.check(&dials, .redial(member: "b", after: .zero))
        #expect(Self.check(&dials, .redialDue(member: "b", token: 4, addresses: ["unix:/b"], linked: true)).isEmpty)
        // A call's dial on its way: the re-dial joins it, and its failure is reported.
        _ = Self.check(&dials, .open(member: "b", addresses: ["unix:/b"], redial: false))
        _ = Self.check(&dials, .redial(member: "b", after: .zero))
        #expect(Self.check(&dials, .redialDue(member: "b", token: 6, addresses: ["unix:/b"], linked: false)).isEmpty)
        #expect(Self.check(&dials, .ended(attempt: 5, kept: false, linked: false, random: 0.5))
            == [.opened(member: "b"), .redialFailed(member: "b", random: 0.5)])
    }
}
