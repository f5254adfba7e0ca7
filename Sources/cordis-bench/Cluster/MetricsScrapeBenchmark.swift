import CCordisShim
import Cordis
import CordisNode
import Foundation
import Synchronization

/// `cordis-bench metrics`: what serving `/metrics` costs a node that serves calls. Node A (in this
/// process, 16 callers on `CordisActor`) calls B's clock, B being a real `cordis-node` started with
/// `--metrics-listen`; rounds of `seconds` alternate between no scraper and a scraper that fetches
/// `GET /metrics` from B every second, as Prometheus would. Reports calls/s of each (the median of
/// the rounds), their ratio, and the size of a scrape.
@CordisActor
enum MetricsScrapeBenchmark {
    static func run(rounds: Int, seconds: Double) async throws -> (rows: [[String: Double]], ratios: [String: Double]) {
        let folder = try WireLatencyBench.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let port = try ProcessProbe.freeTCPPort()
        try #"{"version":1,"entries":[{"id":"clock","plugin":"clock"}]}"#.write(
            toFile: "\(folder)/b.json", atomically: true, encoding: .utf8)
        let node = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
            .deletingLastPathComponent().appendingPathComponent("cordis-node").path
        let child = Process()
        child.executableURL = URL(fileURLWithPath: node)
        child.arguments = ["--name", "b", "--entries", "\(folder)/b.json", "--listen", "unix:\(folder)/b.sock",
                           "--metrics-listen", "tcp:127.0.0.1:\(port)", "--log-level", "warn"]
        child.standardOutput = FileHandle.nullDevice
        try child.run()
        let pair = try await ClusterBenchmark.Pair.start(folder: folder, pinned: false, reuse: nil, external: "unix:\(folder)/b.sock")
        // `Pair` did not start B: it is ours to end.
        defer {
            if child.isRunning {
                kill(child.processIdentifier, SIGKILL)
                child.waitUntilExit()
            }
        }
        var quiet: [Double] = []
        var scraped: [Double] = []
        var scrapeBytes = 0
        var scrapes = 0
        for _ in 0..<rounds {
            quiet.append(try await pair.throughput(inFlight: 16, seconds: seconds))
            let scraper = Scraper(port: UInt16(port))
            scraped.append(try await pair.throughput(inFlight: 16, seconds: seconds))
            let (count, bytes) = scraper.stop()
            scrapes += count
            scrapeBytes = max(scrapeBytes, bytes)
        }
        await pair.node.stop()
        guard scrapes > 0 else { throw BenchmarkError("no scrape of B's /metrics succeeded") }
        let quietMedian = quiet.sorted()[quiet.count / 2]
        let scrapedMedian = scraped.sorted()[scraped.count / 2]
        return (
            [["calls_per_s_no_scrape": quietMedian, "calls_per_s_scrape_every_1s": scrapedMedian]],
            ["scraped_vs_none": scrapedMedian / quietMedian, "scrape_bytes": Double(scrapeBytes), "scrapes": Double(scrapes)]
        )
    }

    /// Fetches `GET /metrics` from 127.0.0.1:`port` every second on a thread of its own until stopped.
    final class Scraper: Sendable {
        private let state = Mutex((stopped: false, count: 0, bytes: 0))
        private let done = DispatchSemaphore(value: 0)

        init(port: UInt16) {
            let thread = Thread { [self] in
                while !state.withLock({ $0.stopped }) {
                    let bytes = Self.fetch(port: port)
                    state.withLock { state in
                        if bytes > 0 {
                            state.count += 1
                            state.bytes = bytes
                        }
                    }
                    // The load pattern: one scrape a second, as a Prometheus scrape_interval of 1 s.
                    Thread.sleep(forTimeInterval: 1)
                }
                done.signal()
            }
            thread.start()
        }

        /// Stops the scraper; returns how many scrapes succeeded and the size of the last one.
        func stop() -> (count: Int, bytes: Int) {
            state.withLock { $0.stopped = true }
            done.wait()
            return state.withLock { ($0.count, $0.bytes) }
        }

        /// One blocking `GET /metrics`; the bytes of the answer (0 when it failed).
        private static func fetch(port: UInt16) -> Int {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            guard fd >= 0 else { return 0 }
            defer { close(fd) }
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = port.bigEndian
            inet_pton(AF_INET, "127.0.0.1", &address.sin_addr)
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            guard connected == 0 else { return 0 }
            let request = Array("GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".utf8)
            guard request.withUnsafeBytes({ send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }) == request.count else { return 0 }
            var total = 0
            var buffer = [UInt8](repeating: 0, count: 65536)
            while true {
                let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
                guard count > 0 else { break }
                total += count
            }
            return total
        }
    }
}
