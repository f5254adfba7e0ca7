import CordisJSON
import CordisProcessTesting
import Foundation
import Testing

/// `cordis-node --metrics-listen`: real nodes serving `/metrics`, checked by `promtool`, and the
/// endpoint's answers to what is not a scrape.
@Suite("Metrics: cordis-node --metrics-listen", .serialized)
struct MetricsEndpointTests {
    static let provider = #"{"version":1,"entries":[{"id":"clock","plugin":"clock"},{"id":"counter","plugin":"counter"},{"id":"flaky","plugin":"flaky","config":{"fail":true}}]}"#
    static let consumer = #"{"version":1,"entries":[{"id":"greeter","plugin":"greeter"},{"id":"badge","plugin":"badge"}]}"#

    /// Starts node `name` serving metrics on a port of its choosing; returns it and that port.
    static func start(
        _ name: String, in folder: TestFolder, entries: String, peers: [String] = []
    ) async throws -> (node: NodeProcess, port: UInt16) {
        try folder.write("\(name).json", entries)
        var arguments = ["--name", name, "--entries", folder.path("\(name).json"), "--listen", "unix:" + folder.path("\(name).sock"),
                         "--metrics-listen", "tcp:127.0.0.1:0", "--heartbeat-interval", "0.2", "--heartbeat-timeout", "1"]
        for peer in peers { arguments += ["--peer", "unix:" + folder.path("\(peer).sock")] }
        let node = try NodeProcess(name: name, arguments: arguments, directory: folder.url)
        let prefix = "metrics on http://127.0.0.1:"
        try #require(await node.waitFor("\(name) to print its metrics address") { text in
            text.split(separator: "\n").contains { $0.hasPrefix(prefix) && $0.hasSuffix("/metrics") }
        }, "\(node.text)")
        let line = try #require(node.text.split(separator: "\n").first { $0.hasPrefix(prefix) })
        let port = try #require(UInt16(line.dropFirst(prefix.count).prefix { $0.isNumber }))
        return (node, port)
    }

    /// The value of the sample `series` (name and labels exactly as written) in `text`.
    static func value(_ series: String, in text: String) -> Double? {
        text.split(separator: "\n").first { $0.hasPrefix(series + " ") }.flatMap { Double($0.dropFirst(series.count + 1)) }
    }

    /// Scrapes `port` until `predicate` holds for the body (bounded).
    static func scrape(_ port: UInt16, until what: String, deadline: Duration = .seconds(20), _ predicate: (String) -> Bool) async -> String {
        let clock = ContinuousClock()
        let end = clock.now + deadline
        var last = ""
        while clock.now < end {
            last = await RawHTTP.get(port: port, "/metrics")?.body ?? ""
            if predicate(last) { return last }
        }
        Issue.record("timed out waiting for \(what); last scrape:\n\(last)")
        return last
    }

    @Test("a node serves every fiber state, call counters that move, members, messages and the process figures, and promtool accepts it")
    func servesTheFamilies() async throws {
        let folder = try TestFolder()
        defer { folder.remove() }
        let (a, portA) = try await Self.start("a", in: folder, entries: Self.provider)
        let (b, portB) = try await Self.start("b", in: folder, entries: Self.consumer, peers: ["a"])
        defer { Task { await a.stop(); await b.stop() } }
        #expect(a.text.contains("metrics on http://127.0.0.1:\(portA)/metrics\n"))
        let served = await Self.scrape(portA, until: "a to serve b's two calls") {
            (Self.value(#"cordis_calls_total{direction="served",outcome="ok"}"#, in: $0) ?? 0) >= 2
        }
        let made = await Self.scrape(portB, until: "b to make two calls") {
            (Self.value(#"cordis_calls_total{direction="made",outcome="ok"}"#, in: $0) ?? 0) >= 2
        }
        for state in ["pending", "loading", "active", "failed", "unloading", "disposed"] {
            #expect(Self.value("cordis_fibers{state=\"\(state)\"}", in: served) != nil, "no \(state) in\n\(served)")
        }
        #expect(Self.value(#"cordis_fibers{state="failed"}"#, in: served) == 1)
        #expect((Self.value(#"cordis_fibers{state="active"}"#, in: served) ?? 0) >= 2)
        #expect((Self.value(#"cordis_call_duration_seconds_count{direction="made"}"#, in: made) ?? 0) >= 2)
        #expect(Self.value(#"cordis_members{health="up"}"#, in: made) == 2)
        #expect(Self.value("cordis_links", in: made) == 1)
        #expect((Self.value(#"cordis_messages_total{direction="sent",kind="call"}"#, in: made) ?? 0) >= 2)
        #expect((Self.value("process_resident_memory_bytes", in: served) ?? 0) > 1_000_000)
        #expect((Self.value("process_open_fds", in: served) ?? 0) > 3)
        let answer = try #require(await RawHTTP.get(port: portA, "/metrics"))
        #expect(answer.status == 200)
        #expect(answer.head.contains("Content-Type: text/plain; version=0.0.4; charset=utf-8"), "\(answer.head)")
        for (name, body) in [("a", served), ("b", made)] {
            try folder.write("\(name).prom", body)
            let check = try await ChildProcess.run(
                URL(fileURLWithPath: "/bin/sh"), ["-c", "promtool check metrics < \(folder.path("\(name).prom"))"], deadline: .seconds(30))
            #expect(check.termination?.status == 0, "promtool on \(name): \(check.output)")
        }
    }

    @Test("what is not a scrape gets a 4xx and the node keeps serving; a slow client holds up no one")
    func hostileRequests() async throws {
        let folder = try TestFolder()
        defer { folder.remove() }
        let (a, port) = try await Self.start("a", in: folder, entries: Self.provider)
        defer { Task { await a.stop() } }
        let cases: [(String, [UInt8], Int)] = [
            ("another path", Array("GET /other HTTP/1.1\r\n\r\n".utf8), 404),
            ("another method", Array("POST /metrics HTTP/1.1\r\n\r\n".utf8), 405),
            ("garbage", Array("\u{0}\u{1}\u{2} hello\r\n\r\n".utf8), 400),
            ("a body", Array("GET /metrics HTTP/1.1\r\nContent-Length: 3\r\n\r\nabc".utf8), 413),
            ("HTTP/2", Array("GET /metrics HTTP/2.0\r\n\r\n".utf8), 505),
            ("a huge head", Array("GET /metrics HTTP/1.1\r\nX: ".utf8) + Array(repeating: UInt8(ascii: "a"), count: 12_000), 431),
        ]
        for (what, request, status) in cases {
            let answer = await RawHTTP.exchange(port: port, request)
            #expect(answer?.status == status, "\(what): \(answer?.text ?? "no answer")")
            #expect(answer?.closedByServer == true, "\(what): the connection stayed open")
        }
        let head = try #require(await RawHTTP.exchange(port: port, Array("HEAD /metrics HTTP/1.0\r\n\r\n".utf8)))
        #expect(head.status == 200 && head.body.isEmpty)
        // A client that never finishes its request does not hold up a scrape meanwhile.
        async let slow = RawHTTP.exchange(port: port, Array("GET /metr".utf8), timeout: 30)
        let clock = ContinuousClock()
        let started = clock.now
        let scrape = await RawHTTP.get(port: port, "/metrics")
        #expect(scrape?.status == 200)
        #expect(clock.now - started < .seconds(5))
        let cut = await slow
        #expect(cut?.closedByServer == true && cut?.bytes.isEmpty == true, "the slow client was not cut: \(String(describing: cut))")
        #expect(clock.now - started < .seconds(20))
        let after = await RawHTTP.get(port: port, "/metrics")
        #expect(after?.status == 200)
    }
}
