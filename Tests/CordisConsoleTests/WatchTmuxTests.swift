import CordisProcessTesting
import Foundation
import Testing

/// `watch` driven in tmux like a person would: start it, see a change appear, resize, quit.
@Suite("cordis-console watch in tmux", .serialized)
struct WatchTmuxTests {
    static let tmux = ["/usr/bin/tmux", "/usr/local/bin/tmux"].first { FileManager.default.isExecutableFile(atPath: $0) }

    /// Runs tmux on its own server socket and awaits it (`runShell`); returns stdout, read from a file.
    @discardableResult
    static func tmux(_ socket: String, _ arguments: [String]) async throws -> String {
        let outPath = socket + ".out"
        let quoted = ([tmux ?? "tmux", "-S", socket] + arguments).map { "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'" }
        await runShell(quoted.joined(separator: " ") + " > '\(outPath)' 2>/dev/null < /dev/null")
        return (try? String(contentsOfFile: outPath, encoding: .utf8)) ?? ""
    }

    /// Captures the pane until `predicate` holds, at most `deadline`.
    static func awaitPane(_ socket: String, _ what: String, deadline: Duration = .seconds(20), _ predicate: (String) -> Bool) async throws -> String {
        let clock = ContinuousClock()
        let end = clock.now + deadline
        var pane = ""
        while clock.now < end {
            pane = try await tmux(socket, ["capture-pane", "-p", "-t", "watch"])
            if predicate(pane) { return pane }
        }
        Issue.record("timed out waiting for \(what); pane:\n\(pane)")
        return pane
    }

    @Test("watch shows the cluster, shows a state change as it happens, follows a resize, and q restores the terminal",
          .enabled(if: tmux != nil, "tmux is not installed"))
    func watchLikeAPerson() async throws {
        let cluster = try Cluster()
        defer { Task { await cluster.stop() } }
        try await cluster.start("a", entries: ConsoleClusterTests.entriesA)
        let socket = cluster.folder.path("tmux.sock")
        let console = NodeProcess.productsDirectory.appendingPathComponent("cordis-console").path
        let marker = cluster.folder.path("after")
        // The shell prints a marker and the terminal modes once watch returns, so the test sees both.
        let script = "\(console) --node \(cluster.address("a")) watch; echo exit=$? > \(marker); stty -a >> \(marker); echo back-at-shell"
        try await Self.tmux(socket, ["new-session", "-d", "-s", "watch", "-x", "100", "-y", "30", "sh", "-c", script + "; sleep 30"])
        defer { Task { _ = try? await Self.tmux(socket, ["kill-server"]) } }
        var pane = try await Self.awaitPane(socket, "the first screen") { $0.contains("cordis watch") && $0.contains("clock") }
        #expect(pane.contains("100x30"))

        let enable = try await cluster.console("a", ["enable", "a:off"])
        #expect(enable.code == 0)
        pane = try await Self.awaitPane(socket, "the change") { $0.contains("pending → active") || $0.contains("loading → active") }
        #expect(pane.contains("counter"))

        try await Self.tmux(socket, ["resize-window", "-t", "watch", "-x", "70", "-y", "20"])
        pane = try await Self.awaitPane(socket, "the resized screen") { $0.contains("70x20") }
        #expect(pane.split(separator: "\n", omittingEmptySubsequences: false).allSatisfy { $0.count <= 70 })

        try await Self.tmux(socket, ["send-keys", "-t", "watch", "q"])
        pane = try await Self.awaitPane(socket, "the shell after quitting") { $0.contains("back-at-shell") }
        #expect(!pane.contains("cordis watch"))
        let after = try String(contentsOfFile: marker, encoding: .utf8)
        #expect(after.hasPrefix("exit=0"))
        let modes = Set(after.split(whereSeparator: { $0 == " " || $0 == "\n" || $0 == ";" }).map(String.init))
        #expect(modes.isSuperset(of: ["icanon", "echo", "isig", "icrnl", "ixon"]), "terminal modes after watch: \(after)")
    }
}
