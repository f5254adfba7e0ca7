import CordisJSON
import CordisProcessTesting
import Foundation
import Testing

/// The web console's Config editor in Chromium (Tests/Browser/web_console_config.py) with a real node: it
/// opens on the entry's config as stored, and saving it unchanged changes nothing, neither the entries file
/// nor the running fiber.
@Suite("Web console config editor in a real browser", .serialized)
struct WebConsoleConfigEditorTests {
    static let entries = #"{"version":1,"entries":[{"id":"clock","plugin":"clock"},{"id":"counter","plugin":"counter","config":{"start":100}}]}"#

    @Test("the Config editor opens on the entry's config, and saving it unchanged keeps the config and the running counter")
    func editorOpensOnTheStoredConfig() async throws {
        try WebConsoleBrowserTests.requireBrowser()
        let cluster = try Cluster()
        defer { Task { await cluster.stop() } }
        try await cluster.start("a", entries: Self.entries)
        let before = try await ConsoleClusterTests.awaitStatus(cluster, through: "a", "a:counter active") {
            ConsoleClusterTests.fiber($0, "a", entry: "counter")?["state"] == "active"
        }
        let fiber = try #require(ConsoleClusterTests.fiber(before, "a", entry: "counter")?["fiber"])
        // Counted past its start: a counter restarted by a config change would count from `start` again.
        let added = try await cluster.console("a", ["call", "counter", "add", "[5]"])
        #expect(added.out == "105\n", "\(added)")

        let console = try NodeProcess(
            name: "console", arguments: ["--node", cluster.address("a"), "web", "--listen", "127.0.0.1:0"],
            directory: cluster.folder.url, executable: NodeProcess.productsDirectory.appendingPathComponent("cordis-console"))
        defer { Task { await console.stop() } }
        #expect(await console.waitForLine(containing: "?token="), "\(console.text)")
        let url = try #require(console.text.split(whereSeparator: \.isWhitespace).first { $0.hasPrefix("http://127.0.0.1:") && $0.contains("?token=") })
        let browser = try NodeProcess(
            name: "browser",
            arguments: [WebConsoleBrowserTests.root.appendingPathComponent("Tests/Browser/web_console_config.py").path,
                        String(url), cluster.folder.url.path, "a:counter"],
            directory: cluster.folder.url, executable: URL(fileURLWithPath: "/usr/bin/python3"))
        defer { Task { await browser.stop() } }
        let code = await browser.exitCode(timeout: .seconds(120))
        #expect(code == 0, "the browser run failed:\n\(browser.text)\nconsole:\n\(console.text)")
        let line = try #require(browser.text.split(separator: "\n").last { $0.hasPrefix("{") }, "\(browser.text)")
        let findings = try JSONParser().parse(Array(line.utf8))["findings"] ?? .null
        let editorText = findings["editorText"]?.stringValue ?? ""
        let opened = try? JSONParser().parse(Array(editorText.utf8))
        #expect(opened == .object(["start": 100]), "the editor opened on \(editorText.debugDescription)")
        #expect(findings["saveError"] == "", "\(findings)")
        #expect(findings["notice"]?.stringValue?.contains("config saved") == true, "\(findings)")

        // The file and the node still hold the config, and the counter was not restarted.
        let file = try JSONParser().parse(Array(try Data(contentsOf: URL(fileURLWithPath: cluster.entries("a")))))
        let stored = file["entries"]?.arrayValue?.first { $0["id"] == "counter" }
        #expect(stored?["config"] == .object(["start": 100]), "\(file)")
        let after = try await cluster.console("a", ["status", "--json"])
        let status = try JSONParser().parse(Array(after.out.utf8))
        #expect(EntryConfigTests.entry(status, "a", "counter")?["config"] == .object(["start": 100]), "\(after.out)")
        #expect(ConsoleClusterTests.fiber(status, "a", entry: "counter")?["fiber"] == fiber, "\(after.out)")
        let value = try await cluster.console("a", ["call", "counter", "value"])
        #expect(value.out == "105\n", "the counter was restarted: \(value)")
        await browser.stop()
        await console.stop()
        await cluster.stop()
    }
}
