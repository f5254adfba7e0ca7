@testable import CordisNode
import Testing

/// `LeaseRule`, a node's own lease in etcd mode: keepalive outcomes and registrations in, directives
/// out, on scripted instants.
@Suite("The lease-loss rule: degraded, withdrawn, registered again")
struct LeaseRuleTests {
    static let start = ContinuousClock.now

    static func at(_ milliseconds: Int) -> ContinuousClock.Instant { start + .milliseconds(milliseconds) }

    @Test("unanswered keepalives change nothing while the lease may live; past a whole TTL the node degrades and withdraws once")
    func unansweredPastTheTTL() {
        var rule = LeaseRule(ttl: .seconds(2), now: Self.at(0))
        #expect(rule.receive(.kept(at: Self.at(600))) == [])
        #expect(rule.receive(.unanswered(at: Self.at(1_300), reason: "refused")) == [])
        #expect(rule.receive(.unanswered(at: Self.at(2_600), reason: "refused")) == [])
        #expect(rule.degraded == nil)
        let lost = rule.receive(.unanswered(at: Self.at(2_700), reason: "refused"))
        #expect(lost == [.degrade("etcd has not answered for longer than the lease (refused)"), .withdrawExports])
        #expect(rule.exportsWithdrawn)
        // Still unanswered: nothing more.
        #expect(rule.receive(.unanswered(at: Self.at(5_000), reason: "refused")) == [])
        // etcd kept the lease across its restart: recovered, shared again after the withdrawal.
        #expect(rule.receive(.kept(at: Self.at(6_000))) == [.recover, .shareAgain(afterWithdrawal: true)])
        #expect(rule.degraded == nil)
        #expect(!rule.exportsWithdrawn)
        #expect(rule.receive(.kept(at: Self.at(6_600))) == [])
    }

    @Test("a lease etcd no longer knows degrades, withdraws and registers again; the registration recovers and shares again")
    func leaseNotFound() {
        var rule = LeaseRule(ttl: .seconds(2), now: Self.at(0))
        #expect(rule.receive(.leaseNotFound) == [.degrade("the etcd lease was lost"), .withdrawExports, .registerAgain])
        // The registration failed (the name taken meanwhile): the next keepalive finds no lease again.
        #expect(rule.receive(.leaseNotFound) == [.registerAgain])
        #expect(rule.receive(.registered(at: Self.at(3_000))) == [.recover, .shareAgain(afterWithdrawal: true)])
        #expect(rule.lastKept == Self.at(3_000))
        // The new lease's TTL counts from the registration.
        #expect(rule.receive(.unanswered(at: Self.at(4_900), reason: "timeout")) == [])
    }

    @Test("already degraded by silence, a lost lease only asks for a new registration")
    func silenceThenLost() {
        var rule = LeaseRule(ttl: .seconds(1), now: Self.at(0))
        #expect(rule.receive(.unanswered(at: Self.at(1_500), reason: "x")).count == 2)
        #expect(rule.receive(.leaseNotFound) == [.registerAgain])
    }

    @Test("a registration while not degraded (the start) asks for nothing")
    func firstRegistration() {
        var rule = LeaseRule(ttl: .seconds(2), now: Self.at(0))
        #expect(rule.receive(.registered(at: Self.at(10))) == [])
        #expect(rule.degraded == nil)
    }
}
