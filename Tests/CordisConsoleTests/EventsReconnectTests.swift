import CordisControl
import CordisJSON
import CordisProcessTesting
import Foundation
import Testing
@testable import CordisConsole

/// `events --follow` when its node goes away: it reconnects through another member, as `watch` does, and
/// prints what happened meanwhile from the nodes' history, once.
@Suite("cordis-console events --follow: reconnection", .serialized)
struct EventsReconnectTests {
    static func record(_ node: String, _ time: Double, _ change: String) -> EventRecord {
        EventRecord(node: node, time: time, kind: "entry", detail: ["entry": "x", "change": .string(change)])
    }

    @Test("after a reconnection, the history gives what was missed, and nothing already seen")
    func resumeKeepsOnlyUnseen() {
        var resume = EventResume()
        let first = [Self.record("a", 1, "added"), Self.record("b", 2, "added"), Self.record("b", 2, "disabled")]
        #expect(resume.unseen(first) == first)
        // A live event.
        resume.saw(Self.record("b", 3, "enabled"))
        // The history after the reconnection: everything b keeps, the gap included.
        let history = first + [Self.record("b", 3, "enabled"), Self.record("b", 3, "removed"), Self.record("b", 4, "added")]
        #expect(resume.unseen(history) == [Self.record("b", 3, "removed"), Self.record("b", 4, "added")])
        #expect(resume.unseen(history).isEmpty)
    }

    @Test("events --follow reconnects through another member when its node dies, printing the gap's events once")
    func followReconnects() async throws {
        let cluster = try Cluster()
        defer { Task { await cluster.stop() } }
        let a = try await cluster.start("a", entries: ConsoleClusterTests.entriesA)
        try await cluster.start("b", entries: #"{"version":1,"entries":[{"id":"clock","plugin":"clock"}]}"#, peers: ["a"])
        #expect(await a.waitForLine(containing: "linked to b"))
        let follower = try cluster.follow("a", ["--timeout", "2", "events", "--follow"])
        defer { Task { await follower.stop() } }
        #expect(await follower.waitForLine(containing: "b entry clock added"), "\(follower.text)")
        #expect(await follower.waitForLine(containing: "a member b up"), "\(follower.text)")
        a.signal(SIGKILL)
        #expect(await follower.waitForLine(containing: "connected to \(cluster.address("b"))", timeout: .seconds(40)), "\(follower.text)")
        // b saw a go while the console had no link: that event comes from b's history.
        #expect(await follower.waitForLine(containing: "b member a down"), "\(follower.text)")
        let disable = try await cluster.console("b", ["disable", "b:clock"])
        #expect(disable.code == 0, "\(disable)")
        #expect(await follower.waitForLine(containing: "b entry clock disabled"), "\(follower.text)")
        // What was printed before the link went is not printed again.
        #expect(follower.text.components(separatedBy: "b entry clock added").count == 2, "\(follower.text)")
        await follower.stop()
        await cluster.stop()
    }
}
