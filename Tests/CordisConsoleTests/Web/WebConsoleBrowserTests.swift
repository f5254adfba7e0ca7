import CordisJSON
import CordisProcessTesting
import Foundation
import Testing

/// `cordis-console web` with three real nodes, driven in Debian's Chromium through Selenium
/// (Tests/Browser/web_console.py): every page opened, a switch flipped, an invalid config refused beside
/// its field, a method called, a node killed and seen unreachable, each page photographed.
@Suite("Web console in a real browser", .serialized)
struct WebConsoleBrowserTests {
    static let entries: [String: String] = [
        "a": #"{"version":1,"entries":[{"id":"clock","plugin":"clock"},{"id":"counter","plugin":"counter","config":{"start":1}},{"id":"spare","plugin":"greeter","disabled":true}]}"#,
        "b": #"{"version":1,"entries":[{"id":"greeter","plugin":"greeter"},{"id":"badge","plugin":"badge"}]}"#,
        "c": #"{"version":1,"entries":[{"id":"tools","plugin":"group"},{"id":"clock","plugin":"clock","parent":"tools"},{"id":"greeter","plugin":"greeter","parent":"tools"}]}"#,
    ]

    /// The repository's root (this file is Tests/CordisConsoleTests/Web/…).
    /// Fails the test unless Chromium, its driver and Python (with Selenium, which the scripts import) are
    /// installed.
    static func requireBrowser() throws {
        for program in ["/usr/bin/chromium", "/usr/bin/chromedriver", "/usr/bin/python3"] {
            try #require(FileManager.default.isExecutableFile(atPath: program), "\(program) is missing: scripts/test.sh installs chromium, chromium-driver and python3-selenium")
        }
    }

    static var root: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
    }

    @Test("every page is live in Chromium: a switch changes an entry, a bad config shows the node's error by its field, a call answers, a killed node turns unreachable")
    func pagesInABrowser() async throws {
        try Self.requireBrowser()
        let cluster = try Cluster()
        defer { Task { await cluster.stop() } }
        let a = try await cluster.start("a", entries: Self.entries["a"] ?? "")
        try await cluster.start("b", entries: Self.entries["b"] ?? "", peers: ["a"])
        let c = try await cluster.start("c", entries: Self.entries["c"] ?? "", peers: ["a"])
        #expect(await a.waitForLine(containing: "linked to b"))
        #expect(await a.waitForLine(containing: "linked to c"))

        let console = try NodeProcess(
            name: "console", arguments: ["--node", cluster.address("a"), "web", "--listen", "127.0.0.1:0"],
            directory: cluster.folder.url, executable: NodeProcess.productsDirectory.appendingPathComponent("cordis-console"))
        defer { Task { await console.stop() } }
        #expect(await console.waitForLine(containing: "?token="), "\(console.text)")
        let url = try #require(console.text.split(whereSeparator: \.isWhitespace).first { $0.hasPrefix("http://127.0.0.1:") && $0.contains("?token=") })

        // Kept after the test (the cluster's folder is removed): the screenshots of this run.
        let shots = FileManager.default.temporaryDirectory.appendingPathComponent("cordis-web-shots-\(ProcessInfo.processInfo.processIdentifier)")
        try FileManager.default.createDirectory(at: shots, withIntermediateDirectories: true)
        let browser = try NodeProcess(
            name: "browser",
            arguments: [Self.root.appendingPathComponent("Tests/Browser/web_console.py").path, String(url), shots.path, "\(c.process.processIdentifier)"],
            directory: cluster.folder.url, executable: URL(fileURLWithPath: "/usr/bin/python3"))
        defer { Task { await browser.stop() } }
        let code = await browser.exitCode(timeout: .seconds(300))
        #expect(code == 0, "the browser run failed (screenshots in \(shots.path)):\n\(browser.text)\nconsole:\n\(console.text)")
        let line = try #require(browser.text.split(separator: "\n").last { $0.hasPrefix("{") }, "\(browser.text)")
        let report = try JSONParser().parse(Array(line.utf8))
        let findings = report["findings"] ?? .null
        #expect(report["ok"] == true)
        #expect(findings["cookie"]?["httpOnly"] == true)
        #expect(findings["cookie"]?["sameSite"] == "Strict")
        #expect(findings["enabled"] == "active")
        // A member's incarnation shows as its first 8 digits, the whole UUID in its tooltip.
        let incarnation = findings["incarnationTitle"]?.stringValue ?? ""
        #expect(UUID(uuidString: incarnation) != nil, "\(findings)")
        #expect(findings["incarnation"]?.stringValue == String(incarnation.prefix(8)) + "…", "\(findings)")
        let refusal = findings["configError"]?.stringValue ?? ""
        #expect(refusal.contains("invalid config") && refusal.contains("(at start)"), "\(refusal)")
        #expect(findings["fieldMarked"]?.stringValue?.hasPrefix("start: Int") == true, "\(findings)")
        #expect(Int(findings["callResult"]?.stringValue ?? "") != nil, "\(findings)")
        // The Services page lists the counter's interface with its methods, and offers them for the call.
        #expect(findings["counterMethods"]?.stringValue?.contains("add, value") == true, "\(findings)")
        #expect(findings["methodChoices"]?.stringValue == "add,value", "\(findings)")
        // The Forget button under the pointer is the same element after the "last seen" count ticked.
        #expect(findings["forgetKept"] == true, "\(findings)")
        // Forgotten from the page, the killed node stays on the Cluster page as left.
        #expect(findings["forgottenHealth"]?.stringValue == "left", "\(findings)")
        #expect(findings["operator"]?.stringValue?.isEmpty == false, "\(findings)")
        #expect(findings["killedHealth"] == "down", "\(findings)")
        #expect(findings["graphHasBinding"] == true)
        // Stopped here, not only by the deferred tasks, which a test process that ends may never run.
        await browser.stop()
        await console.stop()
        await cluster.stop()
        // The page's screenshots, into the docs when asked (CORDIS_WEB_SCREENSHOTS=docs/images).
        if let target = ProcessInfo.processInfo.environment["CORDIS_WEB_SCREENSHOTS"], !target.isEmpty {
            for name in try FileManager.default.contentsOfDirectory(atPath: shots.path) where name.hasPrefix("web-") {
                let destination = URL(fileURLWithPath: target).appendingPathComponent(name)
                try? FileManager.default.removeItem(at: destination)
                try FileManager.default.copyItem(at: shots.appendingPathComponent(name), to: destination)
            }
        }
    }
}
