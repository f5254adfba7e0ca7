import CordisJSON
import CordisProcessTesting
import Foundation
import Testing

/// `events --follow` carries membership changes beside fiber and entry changes.
@Suite("Membership events", .serialized)
struct MembershipEventTests {
    @Test("a member killed, back, and forgotten shows as member down, up and left in events --follow")
    func memberDownUpLeft() async throws {
        let cluster = try Cluster()
        defer { Task { await cluster.stop() } }
        let a = try await cluster.start("a", entries: ConsoleClusterTests.entriesA)
        var b = try await cluster.start("b", entries: #"{"version":1,"entries":[]}"#, peers: ["a"])
        #expect(await a.waitForLine(containing: "linked to b"))
        let follower = try cluster.follow("a", ["events", "--follow", "--on", "a"])
        defer { Task { await follower.stop() } }
        #expect(await follower.waitForLine(containing: "a member b up"), "\(follower.text)")
        b.signal(SIGKILL)
        #expect(await follower.waitForLine(containing: "a member b down (last heard from"), "\(follower.text)")
        b = try await cluster.start("b", entries: #"{"version":1,"entries":[]}"#, peers: ["a"])
        #expect(await follower.waitForOccurrences(of: "a member b up", count: 2), "\(follower.text)")
        b.signal(SIGKILL)
        #expect(await follower.waitForOccurrences(of: "a member b down", count: 2), "\(follower.text)")
        let forget = try await cluster.console("a", ["forget", "b"])
        #expect(forget.code == 0, "\(forget)")
        #expect(await follower.waitForLine(containing: "a member b left (forgotten)"), "\(follower.text)")
        let json = try await cluster.console("a", ["--json", "events", "--on", "a"])
        let records = json.out.split(separator: "\n").compactMap { try? JSONParser().parse(Array($0.utf8)) }
        #expect(records.contains { $0["kind"] == "member" && $0["detail"]?["member"] == "b" && $0["detail"]?["change"] == "left" })
        let members = try await cluster.console("a", ["members"])
        #expect(members.out.hasPrefix("a up"), "\(members.out)")
        #expect(!members.out.contains("\nb "), "\(members.out)")
        // A request for b is refused as for a name a never knew, not as for a member out of reach.
        let relayed = try await cluster.console("a", ["disable", "b:anything"])
        #expect(relayed.code != 0 && relayed.err.contains("no member is named b"), "\(relayed)")
    }

    @Test("a member stopped with SIGTERM shows as member stopped in events --follow and stopped in members, not down")
    func memberStopped() async throws {
        let cluster = try Cluster()
        defer { Task { await cluster.stop() } }
        let a = try await cluster.start("a", entries: ConsoleClusterTests.entriesA)
        let b = try await cluster.start("b", entries: #"{"version":1,"entries":[]}"#, peers: ["a"])
        #expect(await a.waitForLine(containing: "linked to b"))
        let follower = try cluster.follow("a", ["events", "--follow", "--on", "a"])
        defer { Task { await follower.stop() } }
        #expect(await follower.waitForLine(containing: "a member b up"), "\(follower.text)")
        b.signal(SIGTERM)
        #expect(await b.exitCode() == 0)
        #expect(await follower.waitForLine(containing: "a member b stopped"), "\(follower.text)")
        #expect(!follower.text.contains("a member b down"), "\(follower.text)")
        let members = try await cluster.console("a", ["members"])
        #expect(members.out.contains("\nb stopped"), "\(members.out)")
        let status = try await cluster.console("a", ["status"])
        #expect(status.code == 3 && status.out.contains("node b") && status.out.contains("stopped"), "\(status)")
        await follower.stop()
        await cluster.stop()
    }

    @Test("a member that stops answering shows as suspected before it is down, and members says so meanwhile")
    func memberSuspectedThenDown() async throws {
        let cluster = try Cluster()
        defer { Task { await cluster.stop() } }
        let a = try await cluster.start("a", entries: ConsoleClusterTests.entriesA)
        let b = try await cluster.start("b", entries: #"{"version":1,"entries":[]}"#, peers: ["a"])
        #expect(await a.waitForLine(containing: "linked to b"))
        let follower = try cluster.follow("a", ["events", "--follow", "--on", "a"])
        defer { Task { await follower.stop() } }
        #expect(await follower.waitForLine(containing: "a member b up"), "\(follower.text)")
        b.signal(SIGSTOP)
        #expect(await follower.waitForLine(containing: "a member b suspected (silent for"), "\(follower.text)")
        #expect(await follower.waitForLine(containing: "a member b down (last heard from"), "\(follower.text)")
        let text = follower.text
        let order = text.range(of: "a member b suspected").flatMap { suspected in
            text.range(of: "a member b down").map { suspected.lowerBound < $0.lowerBound }
        }
        #expect(order == true, "\(text)")
        b.signal(SIGCONT)
        await follower.stop()
        await cluster.stop()
    }

    @Test("status does not wait for a suspected member: it shows the last snapshot, unreachable because suspected, and asks it again once it answers")
    func statusSkipsASuspectedMember() async throws {
        let cluster = try Cluster()
        defer { Task { await cluster.stop() } }
        // Suspected after 4 s of silence, down after 8 s: a window to ask for the status in.
        let a = try await cluster.start("a", entries: ConsoleClusterTests.entriesA, heartbeatTimeout: 8)
        let b = try await cluster.start("b", entries: #"{"version":1,"entries":[]}"#, peers: ["a"], heartbeatTimeout: 8)
        #expect(await a.waitForLine(containing: "linked to b"))
        let follower = try cluster.follow("a", ["events", "--follow", "--on", "a"])
        defer { Task { await follower.stop() } }
        #expect(await follower.waitForLine(containing: "a member b up"), "\(follower.text)")
        #expect(try await cluster.console("a", ["status"]).code == 0)
        b.signal(SIGSTOP)
        #expect(await follower.waitForLine(containing: "a member b suspected (silent for"), "\(follower.text)")
        // Asked, the frozen b would hold the answer until its link is declared down.
        let status = try await cluster.console("a", ["status", "--json"], timeout: 30)
        b.signal(SIGCONT)
        let parsed = try JSONParser().parse(Array(status.out.utf8))
        let nodeB = try #require(ConsoleClusterTests.node(parsed, "b"), "\(status.out)")
        #expect(nodeB["reachable"] == false)
        #expect(nodeB["health"] == "suspected", "\(nodeB)")
        #expect(nodeB["unreachable"]?.stringValue?.contains("b is suspected: silent for") == true, "\(nodeB)")
        #expect(follower.text.contains("a member b down") == false, "\(follower.text)")
        #expect(await follower.waitForOccurrences(of: "a member b up", count: 2), "\(follower.text)")
        let again = try JSONParser().parse(Array(try await cluster.console("a", ["status", "--json"]).out.utf8))
        #expect(ConsoleClusterTests.node(again, "b")?["reachable"] == true)
        await follower.stop()
        await cluster.stop()
    }
}
