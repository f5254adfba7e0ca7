import CordisJSON
import CordisProcessTesting
import Foundation
import Testing

/// A real Prometheus server (Debian's `prometheus`) on loopback scraping three real nodes every second:
/// its HTTP API finds each node's fiber counts and a call counter that moved.
@Suite("Metrics: a real Prometheus scrapes three nodes", .serialized)
struct PrometheusScrapeTests {
    static let executable = URL(fileURLWithPath: "/usr/bin/prometheus")

    /// The results of an instant query (`data.result`), or nil when the server did not answer it.
    static func query(_ port: UInt16, _ promql: String) async -> [JSONValue]? {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        guard let encoded = promql.addingPercentEncoding(withAllowedCharacters: allowed),
            let answer = await RawHTTP.get(port: port, "/api/v1/query?query=\(encoded)"), answer.status == 200,
            let json = try? JSONParser().parse(Array(answer.body.utf8)), json["status"] == "success"
        else { return nil }
        return json["data"]?["result"]?.arrayValue
    }

    /// The value of each result of `promql`, by its `instance` label.
    static func values(_ port: UInt16, _ promql: String) async -> [String: Double] {
        var values: [String: Double] = [:]
        for result in await query(port, promql) ?? [] {
            let instance = result["metric"]?["instance"]?.stringValue ?? ""
            if let text = result["value"]?.arrayValue?.last?.stringValue, let value = Double(text) { values[instance] = value }
        }
        return values
    }

    /// Queries until `predicate` holds for the values (bounded); returns the last values.
    static func await(
        _ port: UInt16, _ promql: String, _ what: String, deadline: Duration = .seconds(60),
        _ predicate: ([String: Double]) -> Bool
    ) async -> [String: Double] {
        let clock = ContinuousClock()
        let end = clock.now + deadline
        var last: [String: Double] = [:]
        while clock.now < end {
            last = await values(port, promql)
            if predicate(last) { return last }
        }
        Issue.record("Prometheus did not show \(what) within \(deadline): \(promql) = \(last)")
        return last
    }

    @Test("Prometheus finds every node's fiber counts and a call counter that moved")
    func prometheusScrapesThreeNodes() async throws {
        try #require(FileManager.default.isExecutableFile(atPath: Self.executable.path), "install Debian's prometheus package")
        let folder = try TestFolder()
        defer { folder.remove() }
        let (a, portA) = try await MetricsEndpointTests.start("a", in: folder, entries: MetricsEndpointTests.provider)
        let (b, portB) = try await MetricsEndpointTests.start("b", in: folder, entries: MetricsEndpointTests.consumer, peers: ["a"])
        let (c, portC) = try await MetricsEndpointTests.start(
            "c", in: folder, entries: #"{"version":1,"entries":[{"id":"badge","plugin":"badge"}]}"#, peers: ["a"])
        let targets = [portA, portB, portC].map { "\"127.0.0.1:\($0)\"" }.joined(separator: ", ")
        try folder.write("prometheus.yml", """
            global:
              scrape_interval: 1s
              scrape_timeout: 1s
              evaluation_interval: 1s
            scrape_configs:
              - job_name: cordis
                static_configs:
                  - targets: [\(targets)]
            """)
        let port = try #require(try LoopbackPorts.free(1).first)
        let prometheus = try NodeProcess(
            name: "prometheus", arguments: [
                "--config.file=\(folder.path("prometheus.yml"))", "--storage.tsdb.path=\(folder.path("tsdb"))",
                "--web.listen-address=127.0.0.1:\(port)", "--storage.tsdb.retention.time=1h",
            ], directory: folder.url, executable: Self.executable)
        defer { Task { for process in [prometheus, a, b, c] { await process.stop() } } }
        #expect(await prometheus.waitForLine(containing: "Server is ready to receive web requests", timeout: .seconds(60)), "\(prometheus.text)")
        let instances = Set([portA, portB, portC].map { "127.0.0.1:\($0)" })
        let active = await Self.await(port, #"cordis_fibers{state="active"}"#, "each node's active fibers") { values in
            Set(values.keys) == instances && values.values.allSatisfy { $0 > 0 }
        }
        #expect(active["127.0.0.1:\(portA)"] == 2, "a runs clock and counter: \(active)")
        let failed = await Self.await(port, #"cordis_fibers{state="failed"}"#, "each node's failed fibers") { Set($0.keys) == instances }
        #expect(failed["127.0.0.1:\(portA)"] == 1 && failed["127.0.0.1:\(portB)"] == 0, "\(failed)")
        let served = #"cordis_calls_total{direction="served",outcome="ok"}"#
        let before = await Self.await(port, served, "a's served calls") { ($0["127.0.0.1:\(portA)"] ?? 0) >= 3 }
        let start = before["127.0.0.1:\(portA)"] ?? 0
        // c's badge goes and comes back: add(-1) in its disposer, add(1) when it starts again.
        let console = try await ChildProcess.run(
            ConsoleFaultTests.consoleExecutable, ["--node", "unix:" + folder.path("c.sock"), "restart", "c:badge"], deadline: .seconds(30))
        #expect(console.termination?.status == 0, "\(console.output)")
        let moved = await Self.await(port, served, "a's served calls moving") { ($0["127.0.0.1:\(portA)"] ?? 0) >= start + 2 }
        #expect((moved["127.0.0.1:\(portA)"] ?? 0) >= start + 2)
        let rate = await Self.await(port, #"sum(cordis_call_duration_seconds_count{direction="made"})"#, "the made-call histogram") {
            ($0[""] ?? 0) >= 4
        }
        #expect((rate[""] ?? 0) >= 4)
    }
}
