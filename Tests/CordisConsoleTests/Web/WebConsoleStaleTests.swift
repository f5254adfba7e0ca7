import CordisJSON
import CordisProcessTesting
import Foundation
import Testing

/// An open web console page whose console goes away, in Chromium: it turns grey, turns its controls off
/// and says the stream was lost; once another console serves the port with another token, it says its
/// token is no longer valid instead of reconnecting for ever.
@Suite("Web console: a page whose stream is lost", .serialized)
struct WebConsoleStaleTests {
    @Test("a page whose console stopped turns grey with its controls off, then says its token is no longer valid")
    func stalePage() async throws {
        try WebConsoleBrowserTests.requireBrowser()
        let cluster = try Cluster()
        defer { Task { await cluster.stop() } }
        try await cluster.start("a", entries: #"{"version":1,"entries":[{"id":"clock","plugin":"clock"}]}"#)
        let executable = NodeProcess.productsDirectory.appendingPathComponent("cordis-console")
        let first = try NodeProcess(
            name: "web", arguments: ["--node", cluster.address("a"), "web", "--listen", "127.0.0.1:0"],
            directory: cluster.folder.url, executable: executable)
        defer { Task { await first.stop() } }
        #expect(await first.waitForLine(containing: "?token="), "\(first.text)")
        let url = try #require(first.text.split(whereSeparator: \.isWhitespace).first { $0.hasPrefix("http://127.0.0.1:") })
        let port = try #require(url.dropFirst("http://127.0.0.1:".count).split(separator: "/").first)
        let shot = cluster.folder.path("stale.png")
        let browser = try NodeProcess(
            name: "browser",
            arguments: [WebConsoleBrowserTests.root.appendingPathComponent("Tests/Browser/web_console_stale.py").path, String(url), shot],
            directory: cluster.folder.url, executable: URL(fileURLWithPath: "/usr/bin/python3"))
        defer { Task { await browser.stop() } }
        #expect(await browser.waitForLine(containing: "page live", timeout: .seconds(120)), "\(browser.text)")
        await first.stop()
        #expect(await browser.waitForLine(containing: "page stale", timeout: .seconds(90)), "\(browser.text)")
        let second = try NodeProcess(
            name: "web2", arguments: ["--node", cluster.address("a"), "web", "--listen", "127.0.0.1:\(port)"],
            directory: cluster.folder.url, executable: executable)
        defer { Task { await second.stop() } }
        #expect(await second.waitForLine(containing: "?token="), "\(second.text)")
        let code = await browser.exitCode(timeout: .seconds(120))
        #expect(code == 0, "\(browser.text)")
        let line = try #require(browser.text.split(separator: "\n").last { $0.hasPrefix("{") }, "\(browser.text)")
        let findings = try JSONParser().parse(Array(line.utf8))["findings"] ?? .null
        #expect((findings["liveControls"]?.intValue ?? 0) > 0, "\(findings)")
        #expect(findings["staleText"]?.stringValue?.contains("live stream was lost") == true, "\(findings)")
        #expect(findings["staleControls"]?.intValue == 0, "\(findings)")
        #expect(findings["staleFilter"]?.stringValue?.contains("grayscale") == true, "\(findings)")
        #expect(findings["tokenText"]?.stringValue?.contains("token is no longer valid") == true, "\(findings)")
        #expect(findings["tokenLink"]?.stringValue?.contains("reconnecting") == false, "\(findings)")
        #expect(findings["tokenControls"]?.intValue == 0, "\(findings)")
        await browser.stop()
        await second.stop()
        await first.stop()
        await cluster.stop()
    }
}
