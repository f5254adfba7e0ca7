import CordisJSON
import CordisProcessTesting
import Foundation
import Testing
@testable import CordisConsole

/// `watch` when its node goes away: it says why, counts down, and reconnects to another member it saw;
/// its recent changes start from the nodes' history and keep every line of a change.
@Suite("cordis-console watch: history and reconnection", .serialized)
struct WatchReconnectTests {
    @Test("a change of several lines is kept whole, its further lines indented, and the reconnection shows")
    func screenKeepsLinesAndCountdown() {
        var screen = WatchScreen()
        screen.record("2026-12-03T20:00:00.000Z a status flaky#3 loading → failed (first\nsecond)\n")
        #expect(screen.recent == ["2026-12-03T20:00:00.000Z a status flaky#3 loading → failed (first", "    second)"])
        screen.problem = "lost the link to unix:/a.sock: the node closed the link"
        screen.reconnecting = "reconnecting to unix:/b.sock in 3 s"
        let lines = screen.lines(width: 100, height: 20, style: TextStyle(colored: false))
        #expect(lines.contains("! lost the link to unix:/a.sock: the node closed the link"))
        #expect(lines.contains("↻ reconnecting to unix:/b.sock in 3 s"))
        #expect(lines.suffix(2) == ["2026-12-03T20:00:00.000Z a status flaky#3 loading → failed (first", "    second)"])
    }

    @Test("an unreachable member's last seen keeps counting between fetches")
    func lastSeenCounts() throws {
        var screen = WatchScreen()
        screen.status = try ClusterStatus(json: ["nodes": [
            ["name": "b", "reachable": false, "unreachable": "the link to b was lost", "lastSeen": 3, "entries": [], "fibers": []],
        ]])
        screen.sinceFetch = 5.5
        let lines = screen.lines(width: 120, height: 10, style: TextStyle(colored: false))
        #expect(lines.contains { $0.contains("last seen 8 s ago") }, "\(lines)")
    }

    @Test("watch starts from the history, says why it lost its node, counts down, reconnects to another member and shows what happened meanwhile",
          .enabled(if: WatchTmuxTests.tmux != nil, "tmux is not installed"))
    func reconnectsToAnotherMember() async throws {
        let cluster = try Cluster()
        defer { Task { await cluster.stop() } }
        let a = try await cluster.start("a", entries: ConsoleClusterTests.entriesA)
        try await cluster.start("b", entries: #"{"version":1,"entries":[]}"#, peers: ["a"])
        #expect(await a.waitForLine(containing: "linked to b"))
        let enable = try await cluster.console("a", ["enable", "a:off"])
        #expect(enable.code == 0)
        let socket = cluster.folder.path("tmux.sock")
        let console = NodeProcess.productsDirectory.appendingPathComponent("cordis-console").path
        let script = "\(console) --node \(cluster.address("a")) --timeout 2 watch; echo back-at-shell"
        try await WatchTmuxTests.tmux(socket, ["new-session", "-d", "-s", "watch", "-x", "160", "-y", "40", "sh", "-c", script + "; sleep 60"])
        defer { Task { _ = try? await WatchTmuxTests.tmux(socket, ["kill-server"]) } }
        // The enable happened before watch started: it comes from the history. The cluster's status comes
        // too (it names b, the member watch reconnects to once a is gone): a killed before it came would
        // leave watch knowing no other member.
        var pane = try await WatchTmuxTests.awaitPane(socket, "the history and the status") {
            $0.contains("cordis watch") && $0.contains("change by") && $0.contains("enable entry off")
                && !$0.contains("fetching status")
        }
        a.signal(SIGKILL)
        pane = try await WatchTmuxTests.awaitPane(socket, "the lost link and the countdown") {
            $0.contains("lost the link to \(cluster.address("a"))") && $0.contains("reconnecting to")
        }
        pane = try await WatchTmuxTests.awaitPane(socket, "the reconnection to b", deadline: .seconds(40)) {
            $0.contains("connected to \(cluster.address("b"))")
        }
        pane = try await WatchTmuxTests.awaitPane(socket, "a shown as down and unreachable through b") {
            $0.contains("a down, unreachable") && !$0.contains("reconnecting to")
        }
        // What b saw while watch had no link comes from b's history: a going down, b's proxies of a's
        // services disposed.
        pane = try await WatchTmuxTests.awaitPane(socket, "the reconnection gap's events") {
            $0.contains("b member a down") && $0.contains("b status remote:clock#1 unloading → disposed")
        }
        #expect(!pane.contains("back-at-shell"))
        try await WatchTmuxTests.tmux(socket, ["send-keys", "-t", "watch", "q"])
        _ = try await WatchTmuxTests.awaitPane(socket, "the shell after quitting") { $0.contains("back-at-shell") }
    }
}
