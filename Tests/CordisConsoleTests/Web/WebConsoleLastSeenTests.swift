import CordisJSON
import CordisProcessTesting
import Foundation
import Testing

/// `cordis-console web`'s "last seen" of an unreachable member, as a page opened later gets it.
@Suite("Web console: how long ago an unreachable member was seen", .serialized)
struct WebConsoleLastSeenTests {
    /// b's `lastSeen` in the first `state` line of `stream` where b is unreachable, if any.
    static func lastSeenOfB(in text: String) -> Double? {
        for line in text.split(separator: "\n") where line.hasPrefix("state {") {
            guard let state = try? JSONValue(parsing: String(line.dropFirst("state ".count))),
                  let nodes = state["status"]?["nodes"]?.arrayValue,
                  let b = nodes.first(where: { $0["name"]?.stringValue == "b" }),
                  b["reachable"]?.boolValue == false, let seen = b["lastSeen"]?.doubleValue
            else { continue }
            return seen
        }
        return nil
    }

    @Test("a page opened seconds after a member died is told it was seen seconds ago, not at the console's last fetch")
    func lastSeenCountsFromNow() async throws {
        let cluster = try Cluster()
        let b = try await cluster.start("b", entries: #"{"version":1,"entries":[{"id":"clock","plugin":"clock"}]}"#)
        try await cluster.start("a", entries: #"{"version":1,"entries":[{"id":"greeter","plugin":"greeter"}]}"#, peers: ["b"])
        let console = try NodeProcess(
            name: "web", arguments: ["--node", cluster.address("a"), "web", "--listen", "127.0.0.1:0"],
            directory: cluster.folder.url, executable: NodeProcess.productsDirectory.appendingPathComponent("cordis-console"))
        #expect(await console.waitForLine(containing: "?token="), "\(console.text)")
        let url = try #require(console.text.split(whereSeparator: \.isWhitespace).first { $0.hasPrefix("http://127.0.0.1:") })
        let script = WebConsoleBrowserTests.root.appendingPathComponent("Tests/Browser/web_console_stream.py").path
        let first = try NodeProcess(
            name: "first", arguments: [script, String(url)], directory: cluster.folder.url,
            executable: URL(fileURLWithPath: "/usr/bin/python3"))
        #expect(await first.waitForLine(containing: "state {"), "\(first.text)")

        await b.stop()
        #expect(await first.waitFor("a state with b unreachable") { Self.lastSeenOfB(in: $0) != nil }, "\(first.text.suffix(2000))")
        let seenAtDeath = try #require(Self.lastSeenOfB(in: first.text))
        // Time passing is what is tested here, not something to wait for.
        try await Task.sleep(for: .seconds(3))

        let later = try NodeProcess(
            name: "later", arguments: [script, String(url)], directory: cluster.folder.url,
            executable: URL(fileURLWithPath: "/usr/bin/python3"))
        #expect(await later.waitFor("the later page's first state with b unreachable") { Self.lastSeenOfB(in: $0) != nil }, "\(later.text.suffix(2000))")
        let seenLater = try #require(Self.lastSeenOfB(in: later.text))
        #expect(seenLater >= seenAtDeath + 2.5, "b last seen \(seenLater) s ago for a page opened 3 s after one told \(seenAtDeath) s")

        await first.stop()
        await later.stop()
        await console.stop()
        await cluster.stop()
    }
}
