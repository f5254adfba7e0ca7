@testable import CordisNode
import CordisDiscovery
import CordisWire
import Testing

/// `Subscriptions` and what `NodeState` makes of it: who follows events, and the subscriptions to members
/// that follow their link in use.
@Suite("Subscriptions: cluster-wide subscribers follow every linked member, on its link in use")
struct SubscriptionsTests {
    static let alice = OperatorIdentity(name: "alice", identities: ["user:alice"])
    static let bob = OperatorIdentity(name: "bob", identities: ["user:bob"])

    static func subscriber(_ session: Int, _ id: Int, cluster: Bool = true, for identity: OperatorIdentity? = alice)
        -> Subscriptions.Subscriber
    {
        Subscriptions.Subscriber(session: session, id: id, cluster: cluster, on: nil, operator: identity)
    }

    @Test("One subscription per member and operator, made for the first cluster-wide subscriber and ended with the last; a local subscriber follows nobody")
    func onePerMemberAndOperator() {
        var subscriptions = Subscriptions()
        #expect(subscriptions.receive(.subscribed(Self.subscriber(9, 1, cluster: false), linked: ["b"])).isEmpty)
        #expect(subscriptions.receive(.subscribed(Self.subscriber(9, 2), linked: ["c", "b"]))
            == [.follow(member: "b", id: 1, operator: Self.alice), .follow(member: "c", id: 2, operator: Self.alice)])
        #expect(subscriptions.receive(.subscribed(Self.subscriber(10, 1), linked: ["b", "c"])).isEmpty)
        #expect(subscriptions.receive(.subscribed(Self.subscriber(10, 2, for: Self.bob), linked: ["b"]))
            == [.follow(member: "b", id: 3, operator: Self.bob)])
        #expect(subscriptions.follows("b", id: 1) == Subscriptions.Upstream(member: "b", operator: Self.alice))
        #expect(subscriptions.follows("c", id: 1) == nil)
        // alice's first subscriber goes: her other one keeps the follows.
        #expect(subscriptions.receive(.unsubscribed(session: 9, id: nil)).isEmpty)
        #expect(subscriptions.receive(.ended(session: 10))
            == [.unfollow(member: "b", id: 1, request: 4), .unfollow(member: "c", id: 2, request: 5), .unfollow(member: "b", id: 3, request: 6)])
        #expect(subscriptions.followed.isEmpty)
        #expect(subscriptions.newRequestID() == 7)
    }

    @Test("This node's own event reaches every subscriber; a member's reaches the cluster-wide subscribers of the operator whose subscription brought it, never another operator's; on keeps one member's")
    func recipients() {
        var subscriptions = Subscriptions()
        var onC = Self.subscriber(12, 1)
        onC.on = "c"
        for subscriber in [Self.subscriber(9, 1, cluster: false), Self.subscriber(10, 1), Self.subscriber(11, 1, for: Self.bob), onC] {
            _ = subscriptions.receive(.subscribed(subscriber, linked: ["b", "c"]))
        }
        let sessions = { (node: String, upstream: Subscriptions.Upstream?) in
            subscriptions.recipients(ofEventOn: node, upstream: upstream).map(\.session)
        }
        #expect(sessions("a", nil) == [9, 10, 11])
        #expect(sessions("b", Subscriptions.Upstream(member: "b", operator: Self.alice)) == [10])
        #expect(sessions("b", Subscriptions.Upstream(member: "b", operator: Self.bob)) == [11])
        #expect(sessions("c", Subscriptions.Upstream(member: "c", operator: Self.alice)) == [10, 12])
    }

    @Test("Only a console's subscription follows the cluster: a member's is to this node's events, whatever it asks")
    func onlyConsolesFollowTheCluster() {
        var state = NodeStateTests.mesh()
        _ = state.receive(.established(session: 4, holder: .console(identity: "uid:0", role: nil)))
        _ = state.receive(.established(session: 5, holder: .member("b")))
        #expect(state.followsCluster(session: 4, asks: true))
        #expect(!state.followsCluster(session: 4, asks: false))
        #expect(!state.followsCluster(session: 5, asks: true))
    }

    @Test("A member linked again is followed again with new ids; one unlinked is no longer followed (its link ended the subscription)")
    func followsTheLink() {
        var subscriptions = Subscriptions()
        _ = subscriptions.receive(.subscribed(Self.subscriber(9, 1), linked: ["b"]))
        #expect(subscriptions.receive(.memberLinked("b")) == [.follow(member: "b", id: 2, operator: Self.alice)])
        #expect(subscriptions.follows("b", id: 1) == nil)
        #expect(subscriptions.receive(.memberUnlinked("b")).isEmpty)
        #expect(subscriptions.followed.isEmpty)
        // Unsubscribing now ends no subscription to b: there is none.
        #expect(subscriptions.receive(.unsubscribed(session: 9, id: 1)).isEmpty)
    }

    @Test("NodeState: a subscription to a member goes on its link in use; a link that takes over gets it again, a replacement awaited or a member lost drops it, a closed link's subscribers end")
    func nodeStateFollowsTheLinkInUse() {
        // c keeps a second link of b's as a standby (b, whose name sorts first, closes duplicates).
        var state = NodeStateTests.mesh("c")
        _ = state.receive(NodeStateTests.handshake(1, "b", "b1"))
        _ = state.receive(.established(session: 5, holder: .console(identity: "alice", role: .admin)))
        #expect(state.receive(.subscribed(Self.subscriber(5, 1))) == [.followEvents(session: 1, id: 1, operator: Self.alice)])
        // A standby takes over when the link in use closes: the subscription is made again on it.
        _ = state.receive(NodeStateTests.handshake(2, "b", "b1", side: .initiator))
        #expect(state.receive(.link(.linkClosed(session: 1))).contains(.followEvents(session: 2, id: 2, operator: Self.alice)))
        // b closes its link as a duplicate: no subscription while the replacement comes, then one on it.
        _ = state.receive(NodeStateTests.from(2, .goodbye(reason: "x", duplicate: true)))
        #expect(state.subscriptions.followed.isEmpty)
        #expect(state.receive(NodeStateTests.handshake(3, "b", "b1")).contains(.followEvents(session: 3, id: 3, operator: Self.alice)))
        // An idle sweep counts a member followed as busy (etcd mode's rule, asked here of the mesh's state).
        #expect(state.subscriptions.followed.keys.map(\.member) == ["b"])
        // b is lost: nothing followed; the console's link closes: its subscriber ends, nothing to unfollow.
        _ = state.receive(.link(.linkClosed(session: 3)))
        _ = state.receive(.link(.linkClosed(session: 2)))
        #expect(state.subscriptions.followed.isEmpty)
        #expect(state.receive(.link(.linkClosed(session: 5))).isEmpty)
        #expect(state.subscriptions.subscribers.isEmpty)
    }

    @Test("etcd mode: a member whose events this node follows is busy for the idle sweep")
    func followedIsBusy() {
        var state = NodeStateTests.etcd()
        _ = state.receive(.directory(.directoryListed([EtcdDirectoryMachineTests.member("b", "b1")], revision: 2)))
        _ = state.receive(NodeStateTests.handshake(1, "b", "b1"))
        let now = ContinuousClock.now
        state.linkUsed(by: "b", at: now)
        let later = now + .seconds(60)
        _ = state.receive(.subscribed(Self.subscriber(5, 1)))
        #expect(state.receive(.idleSweep(at: later, busy: [])).isEmpty)
        _ = state.receive(.unsubscribed(session: 5, id: 1))
        #expect(state.receive(.idleSweep(at: later, busy: [])) == [.closeIdle(session: 1, member: "b")])
    }
}
