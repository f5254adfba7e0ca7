import CordisControl
import CordisProcessTesting
import CordisWire
import Foundation
import Testing
@testable import CordisConsole

/// `cordis-console web` whose link to the node fell behind: the node ends its subscription with a
/// `lagged` event, and the console follows again, so its pages keep hearing of changes.
@Suite("Web console: a subscription that fell behind", .serialized)
struct WebConsoleLaggedTests {
    @Test("a web console stopped while the node changes gets lagged when it resumes, follows again, and its page hears the next change")
    func followsAgainAfterLagged() async throws {
        let cluster = try Cluster()
        // A heartbeat timeout beyond the test: what ends the subscription is what the console leaves unread.
        let node = try await cluster.start(
            "a", entries: #"{"version":1,"entries":[{"id":"clock","plugin":"clock"},{"id":"marker","plugin":"counter","disabled":true}]}"#,
            heartbeatTimeout: 120)
        let console = try NodeProcess(
            name: "web", arguments: ["--node", cluster.address("a"), "web", "--listen", "127.0.0.1:0"],
            directory: cluster.folder.url, executable: NodeProcess.productsDirectory.appendingPathComponent("cordis-console"))
        #expect(await console.waitForLine(containing: "?token="), "\(console.text)")
        let url = try #require(console.text.split(whereSeparator: \.isWhitespace).first { $0.hasPrefix("http://127.0.0.1:") })
        let stream = try NodeProcess(
            name: "stream", arguments: [WebConsoleBrowserTests.root.appendingPathComponent("Tests/Browser/web_console_stream.py").path, String(url)],
            directory: cluster.folder.url, executable: URL(fileURLWithPath: "/usr/bin/python3"))
        #expect(await stream.waitForLine(containing: "state {"), "\(stream.text)")
        let admin = try await ControlClient.connect(to: Address(parsing: cluster.address("a")), name: "admin")

        // Stopped, the console reads nothing: changes pile up on the node until it ends the subscription.
        #expect(await console.suspend())
        var toggles = 0
        while toggles < 3_000, !node.text.contains("fell behind") {
            _ = try await admin.request(toggles % 2 == 0 ? .disable : .enable, args: ["entry": "clock"])
            toggles += 1
        }
        #expect(node.text.contains("fell behind"), "no lagged after \(toggles) changes: \(node.text.suffix(1500))")
        console.signal(SIGCONT)
        #expect(await stream.waitForLine(containing: #""kind":"lagged""#, timeout: .seconds(60)), "\(stream.text.suffix(1500))")

        // The page hears of the next change: the console subscribed again.
        _ = try await admin.request(.enable, args: ["entry": "marker"])
        let heard = await stream.waitFor("an event of marker after lagged", timeout: .seconds(30)) { text in
            guard let lagged = text.range(of: #""kind":"lagged""#) else { return false }
            return text[lagged.upperBound...].split(separator: "\n").contains { $0.hasPrefix("event ") && $0.contains("marker") }
        }
        #expect(heard, "\(stream.text.suffix(1500))")
        #expect(console.process.isRunning)

        // Stopped here, not only by deferred tasks, which a test process that ends may never run.
        await admin.close()
        await stream.stop()
        await console.stop()
        await cluster.stop()
    }
}
