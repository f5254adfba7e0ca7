import CordisDiscovery
import Testing
@testable import CordisNode

/// A member's health as `NodeState` decides it for every view (`members`, `status`, metrics, events),
/// and the membership changes published from two readings.
@Suite("Member health: one reading in NodeState, in the mesh and in etcd mode")
struct MemberHealthTests {
    typealias Change = MemberHealth.Change

    @Test("up, down, stopped, left, degraded and recovered, each once, sorted by member")
    func changes() {
        let before: [String: MemberHealth] = ["a": .up, "b": .up, "c": .down, "d": .up, "f": .up]
        let now: [String: MemberHealth] = ["a": .degraded, "b": .down, "c": .up, "e": .up, "f": .stopped]
        #expect(MemberHealth.changes(from: before, to: now) == [
            Change(member: "a", change: "degraded"), Change(member: "b", change: "down"), Change(member: "c", change: "up"),
            Change(member: "e", change: "up"), Change(member: "f", change: "stopped"), Change(member: "d", change: "left"),
        ])
        #expect(MemberHealth.changes(from: ["a": .degraded], to: ["a": .up]) == [Change(member: "a", change: "recovered")])
        #expect(MemberHealth.changes(from: ["b": .down], to: ["b": .left]) == [Change(member: "b", change: "left")])
        // A member left already says nothing more when it is no longer listed.
        #expect(MemberHealth.changes(from: ["b": .left], to: [:]).isEmpty)
        #expect(MemberHealth.changes(from: now, to: now).isEmpty)
    }

    static let timeout = Duration.seconds(3)

    @Test("mesh: up while linked, suspected past half the heartbeat timeout, stopped after a goodbye on its link in use, down when its link failed, left when forgotten, up again as a new life")
    func meshReading() {
        var state = NodeStateTests.mesh("a")
        for (session, member) in [(1, "b"), (2, "c"), (3, "d")] {
            _ = state.receive(NodeStateTests.handshake(session, member, member + "1"))
        }
        let silences: [String: Duration] = ["b": .milliseconds(100), "c": .milliseconds(100), "d": .seconds(2)]
        #expect(state.memberHealth(silences: silences, heartbeatTimeout: Self.timeout)
            == ["a": .up, "b": .up, "c": .up, "d": .suspected])
        // b stops in order: its goodbye on the link in use, then the link closes.
        _ = state.receive(NodeStateTests.from(1, .goodbye(reason: "node b is stopping")))
        _ = state.receive(.link(.linkClosed(session: 1)))
        // c crashes: its link closes without a word.
        _ = state.receive(.link(.linkClosed(session: 2)))
        #expect(state.memberHealth(silences: [:], heartbeatTimeout: Self.timeout)
            == ["a": .up, "b": .stopped, "c": .down, "d": .up])
        _ = state.receive(.forgotten(name: "c"))
        _ = state.receive(NodeStateTests.handshake(4, "b", "b2"))
        #expect(state.memberHealth(silences: [:], heartbeatTimeout: Self.timeout)
            == ["a": .up, "b": .up, "c": .left, "d": .up])
        // The new life crashes: down, not stopped (its earlier life's goodbye says nothing of it).
        _ = state.receive(.link(.linkClosed(session: 4)))
        #expect(state.memberHealth(silences: [:], heartbeatTimeout: Self.timeout)["b"] == .down)
    }

    @Test("mesh: a goodbye of a duplicate link, or one a standby takes over from, says nothing of the life")
    func meshGoodbyeOfAnotherLink() {
        // c keeps a second link of b's life as a standby (b, whose name sorts first, closes duplicates).
        var state = NodeStateTests.mesh("c")
        _ = state.receive(NodeStateTests.handshake(1, "b", "b1"))
        _ = state.receive(NodeStateTests.handshake(2, "b", "b1", side: .initiator))
        #expect(state.membership.members["b"]?.standbys.map(\.session) == [2])
        _ = state.receive(NodeStateTests.from(1, .goodbye(reason: "c already linked")))
        _ = state.receive(.link(.linkClosed(session: 1)))
        #expect(state.memberHealth(silences: [:], heartbeatTimeout: Self.timeout)["b"] == .up)
        _ = state.receive(.link(.linkClosed(session: 2)))
        #expect(state.memberHealth(silences: [:], heartbeatTimeout: Self.timeout)["b"] == .down)
    }

    static func member(_ name: String, _ incarnation: String, stopping: Bool = false) -> EtcdKeyValue {
        EtcdKeyValue(
            key: EtcdDirectory.memberKey(name),
            value: EtcdDirectory.memberValue(
                .init(name: name, incarnation: incarnation, addresses: ["unix:/tmp/\(name).sock"], stopping: stopping),
                version: "test"))
    }

    @Test("etcd mode: up while registered, down once its link failed or its lease expired (still listed), stopped when its registration said so, degraded without the lease")
    func etcdReading() {
        var state = NodeStateTests.etcd("a")
        let b = Self.member("b", "b1"), c = Self.member("c", "c1"), d = Self.member("d", "d1")
        _ = state.receive(.directory(.directoryListed([b, c, d], revision: 2)))
        #expect(state.memberHealth(silences: [:], heartbeatTimeout: Self.timeout) == ["a": .up, "b": .up, "c": .up, "d": .up])
        // b stops: its registration says so, then goes. c's lease expires. d's link fails while it is registered.
        _ = state.receive(.directory(.directoryChanged([.put(Self.member("b", "b1", stopping: true))], revision: 3)))
        #expect(state.memberHealth(silences: [:], heartbeatTimeout: Self.timeout)["b"] == .stopped)
        _ = state.receive(.directory(.directoryChanged(
            [.delete(key: b.key, revision: 4), .delete(key: c.key, revision: 4)], revision: 4)))
        _ = state.receive(NodeStateTests.handshake(1, "d", "d1", side: .initiator))
        _ = state.receive(.link(.linkClosed(session: 1)))
        let health = state.memberHealth(silences: [:], heartbeatTimeout: Self.timeout)
        #expect(health == ["a": .up, "b": .stopped, "c": .down, "d": .down])
        #expect(state.memberList(own: .init(name: "a", addresses: [], incarnation: "a1")).map(\.name) == ["a", "b", "c", "d"])
        #expect(state.knownMembers == ["b", "c", "d"])
        // c registers again as a new life: up; b is forgotten: left, and no longer known.
        _ = state.receive(.directory(.directoryChanged([.put(Self.member("c", "c2"))], revision: 5)))
        _ = state.receive(.forgotten(name: "b"))
        #expect(state.memberHealth(silences: [:], heartbeatTimeout: Self.timeout) == ["a": .up, "b": .left, "c": .up, "d": .down])
        #expect(state.knownMembers == ["c", "d"])
        // Without its lease this node is degraded.
        _ = state.receive(.lease(.registered(at: .now)))
        _ = state.receive(.lease(.unanswered(at: .now + .seconds(60), reason: "etcd is away")))
        #expect(state.memberHealth(silences: [:], heartbeatTimeout: Self.timeout)["a"] == .degraded)
    }
}
