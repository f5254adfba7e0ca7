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
}
