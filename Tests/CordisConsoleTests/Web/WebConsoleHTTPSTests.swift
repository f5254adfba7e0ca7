import CordisJSON
import CordisProcessTesting
import Foundation
import Testing
@testable import CordisConsole

/// `cordis-console web` over HTTPS with a real node: the Secure cookie, the access rules and hostile
/// requests answered with their 4xx over TLS, a client without TLS cut off; and `web`'s options.
@Suite("Web console over HTTPS", .serialized)
struct WebConsoleHTTPSTests {
    @Test("web takes --listen and the HTTPS pair; another address than loopback needs HTTPS")
    func options() throws {
        #expect(try ConsoleArguments(parsing: ["web"]).command == .web(listen: "127.0.0.1:0", certificate: nil, key: nil))
        #expect(try ConsoleArguments(parsing: ["web", "--listen", "0.0.0.0:8443", "--web-tls-cert", "c.pem", "--web-tls-key", "k.pem"]).command
            == .web(listen: "0.0.0.0:8443", certificate: "c.pem", key: "k.pem"))
        for (arguments, fragment) in [
            (["web", "--listen", "0.0.0.0:8443"], "needs HTTPS"), (["web", "--listen", "192.0.2.1:80"], "needs HTTPS"),
            (["web", "--web-tls-cert", "c.pem"], "both --web-tls-cert and --web-tls-key"),
            (["web", "--listen", "nowhere"], "--listen takes HOST:PORT"), (["web", "extra"], "no arguments"),
            (["status", "--listen", "127.0.0.1:1"], "does not apply to status"),
        ] {
            do {
                _ = try ConsoleArguments(parsing: arguments)
                Issue.record("\(arguments) was accepted")
            } catch {
                #expect(error.code == .usage)
                #expect(error.message.contains(fragment), "\(arguments): \(error.message)")
            }
        }
    }

    @Test("over HTTPS the cookie is Secure, the rules hold, hostile requests get their 4xx, and a client without TLS is cut off")
    func https() async throws {
        let cluster = try Cluster()
        defer { Task { await cluster.stop() } }
        try await cluster.start("a", entries: #"{"version":1,"entries":[{"id":"clock","plugin":"clock"}]}"#)
        let key = cluster.folder.path("web-key.pem")
        let certificate = cluster.folder.path("web-cert.pem")
        #expect(await runShell(
            "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout \(key) -out \(certificate) -days 2 "
                + "-subj /CN=localhost -addext subjectAltName=IP:127.0.0.1 2>/dev/null") == 0)
        let console = try NodeProcess(
            name: "console",
            arguments: ["--node", cluster.address("a"), "web", "--listen", "127.0.0.1:0", "--web-tls-cert", certificate, "--web-tls-key", key],
            directory: cluster.folder.url, executable: NodeProcess.productsDirectory.appendingPathComponent("cordis-console"))
        defer { Task { await console.stop() } }
        #expect(await console.waitForLine(containing: "?token="), "\(console.text)")
        let url = try #require(console.text.split(whereSeparator: \.isWhitespace).first { $0.hasPrefix("https://127.0.0.1:") })
        let probe = try NodeProcess(
            name: "probe", arguments: [WebConsoleBrowserTests.root.appendingPathComponent("Tests/Browser/web_console_probe.py").path, String(url)],
            directory: cluster.folder.url, executable: URL(fileURLWithPath: "/usr/bin/python3"))
        defer { Task { await probe.stop() } }
        #expect(await probe.exitCode(timeout: .seconds(120)) == 0, "\(probe.text)")
        let line = try #require(probe.text.split(separator: "\n").last { $0.hasPrefix("{") }, "\(probe.text)")
        let results = try JSONParser().parse(Array(line.utf8))
        #expect(results["tokenURL"] == 302, "\(results)")
        #expect(results["cookieHeader"]?.stringValue?.hasSuffix("; HttpOnly; SameSite=Strict; Path=/; Secure") == true, "\(results)")
        #expect(results["noToken"] == 401, "\(results)")
        #expect(results["withCookie"] == 200, "\(results)")
        #expect(results["foreignOrigin"] == 403, "\(results)")
        #expect(results["badJSON"] == 400, "\(results)")
        // The node's refusal comes back as the page shows it.
        #expect(results["unknownEntry"] == 422, "\(results)")
        #expect(results["oversizedHead"] == 431, "\(results)")
        #expect(results["garbage"] == 400, "\(results)")
        #expect(results["plainHTTP"] == "closed", "\(results)")
        #expect(results["enableClock"] == 200, "\(results)")
        // Stopped here, not only by the deferred tasks, which a test process that ends may never run.
        await probe.stop()
        await console.stop()
        await cluster.stop()
    }

    @Test("a viewer's change from the page is refused by the node, and the answer carries the node's refusal")
    func viewerIsRefused() async throws {
        let cluster = try Cluster()
        defer { Task { await cluster.stop() } }
        try await cluster.start(
            "a", entries: #"{"version":1,"entries":[{"id":"clock","plugin":"clock"}]}"#,
            extra: try OperatorRoleTests.operators(cluster, "a", [OperatorRoleTests.uid: "viewer"]))
        let console = try NodeProcess(
            name: "console", arguments: ["--node", cluster.address("a"), "web"],
            directory: cluster.folder.url, executable: NodeProcess.productsDirectory.appendingPathComponent("cordis-console"))
        defer { Task { await console.stop() } }
        #expect(await console.waitForLine(containing: "?token="), "\(console.text)")
        let url = try #require(console.text.split(whereSeparator: \.isWhitespace).first { $0.hasPrefix("http://127.0.0.1:") })
        let probe = try NodeProcess(
            name: "probe", arguments: [WebConsoleBrowserTests.root.appendingPathComponent("Tests/Browser/web_console_probe.py").path, String(url)],
            directory: cluster.folder.url, executable: URL(fileURLWithPath: "/usr/bin/python3"))
        defer { Task { await probe.stop() } }
        #expect(await probe.exitCode(timeout: .seconds(120)) == 0, "\(probe.text)")
        let line = try #require(probe.text.split(separator: "\n").last { $0.hasPrefix("{") }, "\(probe.text)")
        let results = try JSONParser().parse(Array(line.utf8))
        #expect(results["withCookie"] == 200, "\(results)")
        #expect(results["enableClock"] == 422, "\(results)")
        let answer = try JSONParser().parse(Array((results["enableClockAnswer"]?.stringValue ?? "").utf8))
        #expect(answer["error"] == "enable needs the operator role; you are viewer", "\(results)")
        await probe.stop()
        await console.stop()
        await cluster.stop()
    }
}
