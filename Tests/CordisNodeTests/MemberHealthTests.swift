import Testing
@testable import CordisNode

/// The membership changes published as `member` events, from two readings of every member's health.
@Suite("Member health changes")
struct MemberHealthTests {
    typealias Change = MemberHealth.Change

    @Test("up, down, left, degraded and recovered, each once, sorted by member")
    func changes() {
        let before: [String: MemberHealth] = ["a": .up, "b": .up, "c": .down, "d": .up]
        let now: [String: MemberHealth] = ["a": .degraded, "b": .down, "c": .up, "e": .up]
        #expect(MemberHealth.changes(from: before, to: now) == [
            Change(member: "a", change: "degraded"), Change(member: "b", change: "down"), Change(member: "c", change: "up"),
            Change(member: "e", change: "up"), Change(member: "d", change: "left"),
        ])
        #expect(MemberHealth.changes(from: ["a": .degraded], to: ["a": .up]) == [Change(member: "a", change: "recovered")])
        #expect(MemberHealth.changes(from: now, to: now).isEmpty)
    }

    typealias Sighting = MemberHealth.Sighting

    static let sightings = [
        Sighting(name: "a", silence: .seconds(9), registered: true),  // this node: its own health
        Sighting(name: "b", silence: .milliseconds(400), registered: true),
        Sighting(name: "c", silence: .seconds(2), registered: false),
        Sighting(name: "d", silence: nil, registered: true),
        Sighting(name: "e", silence: nil, registered: false),
        Sighting(name: "f", silence: .zero, registered: true),
    ]

    @Test("in the mesh: up while linked, suspected past half the heartbeat timeout, down without a link; forgotten ones unlisted")
    func meshReading() {
        let health = MemberHealth.reading(
            of: "a", degraded: false, members: Self.sightings, forgotten: ["f"], heartbeatTimeout: .seconds(3), etcdMode: false)
        #expect(health == ["a": .up, "b": .up, "c": .suspected, "d": .down, "e": .down])
    }

    @Test("in etcd mode: up while linked or registered, unlisted when neither; this node degraded without its lease")
    func etcdReading() {
        let health = MemberHealth.reading(
            of: "a", degraded: true, members: Self.sightings, forgotten: [], heartbeatTimeout: .seconds(3), etcdMode: true)
        #expect(health == ["a": .degraded, "b": .up, "c": .suspected, "d": .up, "f": .up])
    }
}
