import CCordisShim
import Cordis
import CordisJSON
import CordisWire
import Foundation

/// `cordis-bench all [--quick] [--json] [--rounds N] [--only GROUP,...]`: every headline figure in one
/// process tree, printed as one JSON object (or aligned text).
///
/// Each figure is the median over `rounds` repeated runs (3, or 1 with `--quick`); its spread (the lowest
/// and highest run) is printed next to it (`spread` in JSON). The groups are `core`, `loader`, `codec`,
/// `calls` (remote call latency and throughput node to node, raw echo floor, Unix socket and
/// authenticated TCP, pinned to CPU 0 and unpinned), `cluster` (remote withdrawal, failure detection,
/// idle memory), `start` (a cluster of 8 nodes with 1,000 fibers each) and `scale` (see
/// `AllBenchmark+Scale.swift`); `profile` (not run unless
/// named) is a bare call loop for instruction counts. `--iterations N` sets the calls per series. `--quick` is a smoke run
/// with small sizes: its figures are not comparable with a full run.
@CordisActor
enum AllBenchmark {
    nonisolated static let groups = ["core", "loader", "codec", "calls", "cluster", "start", "scale", "profile"]

    /// The settings of one run.
    struct Settings {
        var quick = false
        var json = false
        var rounds = 3
        var only: Set<String> = Set(AllBenchmark.groups).subtracting(["profile"])
        var iterations: Int?

        var callIterations: Int { iterations ?? (quick ? 300 : 5_000) }
        var throughputSeconds: Double { quick ? 0.3 : 2 }
        var toggles: Int { quick ? 3 : 20 }
        var clusterNodes: Int { quick ? 3 : 8 }
        var clusterFibers: Int { quick ? 100 : 1_000 }
    }

    /// Every run's value of each figure, in the order measured.
    struct Samples {
        var values: [String: [Double]] = [:]
        var order: [String] = []

        mutating func add(_ key: String, _ value: Double) {
            if values[key] == nil { order.append(key) }
            values[key, default: []].append(value)
        }
    }

    static func main(arguments: [String]) async -> Int32 {
        var settings = Settings()
        var index = 0
        while index < arguments.count {
            switch arguments[index] {
            case "--quick": settings.quick = true
            case "--json": settings.json = true
            case "--rounds", "--only", "--iterations":
                guard index + 1 < arguments.count else {
                    WireLatencyBench.printError("\(arguments[index]) needs a value")
                    return 64
                }
                let value = arguments[index + 1]
                if arguments[index] == "--iterations" {
                    guard let iterations = Int(value), (1...10_000_000).contains(iterations) else {
                        WireLatencyBench.printError("--iterations needs a number from 1 to 10000000")
                        return 64
                    }
                    settings.iterations = iterations
                } else if arguments[index] == "--rounds" {
                    guard let rounds = Int(value), (1...100).contains(rounds) else {
                        WireLatencyBench.printError("--rounds needs a number from 1 to 100")
                        return 64
                    }
                    settings.rounds = rounds
                } else {
                    let chosen = Set(value.split(separator: ",").map(String.init))
                    guard chosen.isSubset(of: groups) else {
                        WireLatencyBench.printError("--only takes some of \(groups.joined(separator: ","))")
                        return 64
                    }
                    settings.only = chosen
                }
                index += 1
            default:
                WireLatencyBench.printError("unknown argument \(arguments[index])")
                return 64
            }
            index += 1
        }
        if settings.quick && !arguments.contains("--rounds") { settings.rounds = 1 }
        do {
            let samples = try await run(settings)
            print(render(samples, settings: settings))
            WireLatencyBench.flushOutput()
            return 0
        } catch {
            WireLatencyBench.printError("\(error)")
            return 1
        }
    }

    static func run(_ settings: Settings) async throws -> Samples {
        var samples = Samples()
        for _ in 0..<settings.rounds {
            if settings.only.contains("core") { try await core(settings, into: &samples) }
            if settings.only.contains("loader") { await loader(into: &samples) }
            if settings.only.contains("codec") { codec(into: &samples) }
            if settings.only.contains("calls") { try await calls(settings, into: &samples) }
            if settings.only.contains("calls") { try await TLSCallBenchmark.calls(settings, into: &samples) }
            if settings.only.contains("cluster") { try await cluster(settings, into: &samples) }
            if settings.only.contains("start") { try await start(settings, into: &samples) }
            if settings.only.contains("scale") { try await scale(settings, into: &samples) }
            if settings.only.contains("profile") { try await profile(settings, into: &samples) }
        }
        return samples
    }

    // MARK: Groups

    static func core(_ settings: Settings, into samples: inout Samples) async throws {
        let rows = try await CoreBenchmark.run(quick: settings.quick)
        guard let ten = rows.first(where: { $0.consumers == 10_000 }), let largest = rows.last, let before = rows.dropLast().last
        else { return }
        samples.add("core_withdraw_10k_ms", ten.withdraw * 1000)
        samples.add("core_load_10k_ms", ten.load * 1000)
        // The worst growth of the three operations from the second largest size to the largest
        // (10k → 100k in a full run: 10 when linear).
        let growth = CoreBenchmark.Growth(from: before, to: largest)
        samples.add("core_scale_ratio", growth.worst)
        // Each of the three, so the worst one can be named.
        samples.add("core_scale_load", growth.load)
        samples.add("core_scale_withdraw", growth.withdraw)
        samples.add("core_scale_reprovide", growth.reprovide)
        samples.add("core_bytes_per_fiber", largest.bytesPerFiber)
    }

    static func loader(into samples: inout Samples) async {
        let figures = Dictionary(await runLoaderBenchmark(entries: 10_000), uniquingKeysWith: { first, _ in first })
        if let change = figures["config change ms"] { samples.add("loader_single_update_ms", change) }
        if let start = figures["start ms"] { samples.add("loader_start_10k_ms", start) }
    }

    static func codec(into samples: inout Samples) {
        let figures = runWireCodecBenchmark()
        if let decode = figures["result64k.decode.cordis.MB_per_s"] { samples.add("wire_decode_mb_s", decode) }
        if let encode = figures["result64k.encode.cordis.MB_per_s"] { samples.add("wire_encode_mb_s", encode) }
        if let call = figures["call.decode.cordis.msgs_per_s"] { samples.add("wire_decode_call_per_s", call) }
        if let result = figures["result.decode.cordis.msgs_per_s"] { samples.add("wire_decode_result_per_s", result) }
        for (figure, key) in [
            ("codable.reading.encode.per_s", "codable_encode_reading_per_s"),
            ("codable.reading.decode.per_s", "codable_decode_reading_per_s"),
            ("codable.reading.decode_text.per_s", "codable_decode_reading_text_per_s"),
            ("codable.reading.decode_document.per_s", "codable_decode_reading_document_per_s"),
            ("codable.items100.encode.per_s", "codable_encode_items100_per_s"),
            ("codable.items100.decode.per_s", "codable_decode_items100_per_s"),
            ("codable.items100.decode_text.per_s", "codable_decode_items100_text_per_s"),
            ("codable.items100.decode_document.per_s", "codable_decode_items100_document_per_s"),
        ] {
            if let value = figures[figure] { samples.add(key, value) }
        }
    }

    /// Node-to-node calls (node A in this process, B a `cordis-node` child) and the raw echo floor,
    /// Unix socket and authenticated TCP, pinned to CPU 0 and unpinned.
    static func calls(_ settings: Settings, into samples: inout Samples) async throws {
        let probes = CacheProbe.sizes.map { (key: $0.key, probe: CacheProbe(bytes: $0.bytes)) }
        for pinned in [true, false] {
            _ = ccordis_set_process_affinity(pinned ? 0 : -1)
            defer { _ = ccordis_set_process_affinity(-1) }
            let suffix = pinned ? "_pinned" : ""
            for tcp in [false, true] {
                // How much cache this process gets right before the series (see `CacheProbe`).
                for (key, probe) in probes {
                    samples.add(key, probe.nanosecondsPerStep(steps: settings.quick ? 20_000 : 300_000))
                }
                let socket = tcp ? "tcp" : "uds"
                let folder = try WireLatencyBench.temporaryFolder()
                defer { try? FileManager.default.removeItem(atPath: folder) }
                let listen = tcp ? "tcp:127.0.0.1:0" : "unix:\(folder)/raw.sock"
                let raw = try WireLatencyBench.EchoPeer(mode: "raw", listen: listen, pinned: pinned, secret: nil)
                let frame = try WireLatencyBench.callFrame(secrets: nil)
                let echoTimes = try WireLatencyBench.rawRoundTrips(to: raw.address, frame: frame, iterations: settings.callIterations)
                let echo = WireLatencyBench.Series(placement: "", socket: socket, kind: "raw", samples: echoTimes)
                raw.stop()
                samples.add("echo_\(socket)_p50_us\(suffix)", echo.p50)
                let pair = try await ClusterBenchmark.Pair.start(folder: folder, pinned: pinned, tcp: tcp)
                let callTimes = try await pair.callRoundTrips(settings.callIterations)
                let call = WireLatencyBench.Series(placement: "", socket: socket, kind: "call", samples: callTimes)
                samples.add("call_\(socket)_p50_us\(suffix)", call.p50)
                // How far each series moved while it ran: the p50 of its tenths, lowest and highest.
                for (kind, times) in [("echo", echoTimes), ("call", callTimes)] {
                    if let range = WireLatencyBench.Series.windowP50Range(of: times, windows: 10) {
                        samples.add("\(kind)_\(socket)_window_p50_min_us\(suffix)", range.lowest)
                        samples.add("\(kind)_\(socket)_window_p50_max_us\(suffix)", range.highest)
                    }
                }
                samples.add("call_\(socket)_p99_us\(suffix)", call.p99)
                samples.add("call_\(socket)_ratio\(suffix)", call.p50 / echo.p50)
                if !tcp {
                    let cpuBefore = ProcessProbe.cpuSeconds(pid: getpid()) + ProcessProbe.cpuSeconds(pid: pair.child.processIdentifier)
                    let rate = try await pair.throughput(inFlight: 64, seconds: settings.throughputSeconds)
                    let cpuAfter = ProcessProbe.cpuSeconds(pid: getpid()) + ProcessProbe.cpuSeconds(pid: pair.child.processIdentifier)
                    samples.add("calls_per_s\(suffix)", rate)
                    samples.add("cpu_us_per_call\(suffix)", (cpuAfter - cpuBefore) / (rate * settings.throughputSeconds) * 1e6)
                }
                await pair.finish()
            }
        }
    }

    /// Only node-to-node calls over a Unix socket, unpinned, `--iterations` of them: the workload to
    /// profile or count under `perf` (run it with two counts; the difference is the cost of the extra
    /// calls; valgrind 3.19 stops with an internal error on any Swift program with an async `main`,
    /// so callgrind cannot count it on Debian 12). With `CORDIS_BENCH_PEER=unix:PATH` it calls the node B
    /// already listening there (started under a tool) instead of starting one. With
    /// `CORDIS_BENCH_PROFILE=throughput` it runs the `calls_per_s` workload instead (64 calls in flight
    /// for `--iterations` hundredths of a second), to profile the batched path. With
    /// `CORDIS_BENCH_PROFILE_SOCKET=tcp` the pair it starts talks over TCP loopback with a cluster secret.
    static func profile(_ settings: Settings, into samples: inout Samples) async throws {
        let folder = try WireLatencyBench.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let environment = ProcessInfo.processInfo.environment
        let pair = try await ClusterBenchmark.Pair.start(
            folder: folder, pinned: false, tcp: environment["CORDIS_BENCH_PROFILE_SOCKET"] == "tcp",
            external: environment["CORDIS_BENCH_PEER"])
        if environment["CORDIS_BENCH_PROFILE"] == "throughput" {
            let seconds = Double(settings.callIterations) / 100
            samples.add("profile_calls_per_s", try await pair.throughput(inFlight: 64, seconds: seconds))
        } else {
            let call = WireLatencyBench.Series(
                placement: "", socket: "uds", kind: "call", samples: try await pair.callRoundTrips(settings.callIterations))
            samples.add("profile_call_uds_p50_us", call.p50)
        }
        await pair.finish()
    }

    /// Remote withdrawal, failure detection (kill and SIGSTOP) and an idle node's memory, unpinned.
    static func cluster(_ settings: Settings, into samples: inout Samples) async throws {
        let folder = try WireLatencyBench.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let pair = try await ClusterBenchmark.Pair.start(folder: folder, pinned: false)
        try await Task.sleep(for: .milliseconds(300))
        samples.add("node_rss_idle_mb", pair.childResidentMB())
        samples.add("node_pss_idle_mb", ProcessProbe.proportionalMB(pid: pair.child.processIdentifier))
        samples.add("node_anon_idle_mb", ProcessProbe.anonymousMB(pid: pair.child.processIdentifier))
        let toggles = try await pair.disableUntilPending(settings.toggles).sorted()
        samples.add("withdraw_remote_p50_ms", toggles[toggles.count / 2] * 1000)
        samples.add("withdraw_remote_p99_ms", toggles[min(toggles.count - 1, toggles.count * 99 / 100)] * 1000)
        samples.add("detect_kill_ms", try await pair.killUntilPending() * 1000)
        let restarted = try await ClusterBenchmark.Pair.start(folder: folder, pinned: false, reuse: pair)
        samples.add("detect_stop_ms", try await restarted.stopUntilDown() * 1000)
        await restarted.finish()
    }

    static func start(_ settings: Settings, into samples: inout Samples) async throws {
        let figures = try await ClusterStartBenchmark.run(nodes: settings.clusterNodes, fibers: settings.clusterFibers)
        samples.add("cluster_start_ms", figures.startMilliseconds)
        samples.add("status_8x1000_ms", figures.statusMilliseconds)
        samples.add("status_fibers", Double(figures.fibersReported))
        samples.add("node_rss_1000_fibers_mb", figures.idleResidentMB)
    }

    // MARK: Output

    nonisolated static func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        guard !sorted.isEmpty else { return 0 }
        let middle = sorted.count / 2
        return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
    }

    static func render(_ samples: Samples, settings: Settings) -> String {
        if settings.json {
            var figures: JSONObject = [:]
            var spread: JSONObject = [:]
            for key in samples.order {
                let values = samples.values[key] ?? []
                figures[key] = .number(median(values))
                spread[key] = .array([.number(values.min() ?? 0), .number(values.max() ?? 0)])
            }
            figures["rounds"] = .integer(settings.rounds)
            figures["quick"] = .bool(settings.quick)
            figures["spread"] = .object(spread)
            figures["machine"] = .string("\(ProcessInfo.processInfo.activeProcessorCount) CPUs, load \(loadAverage())")
            var output: [UInt8] = []
            JSONSerializer.append(.object(figures), to: &output)
            return String(decoding: output, as: UTF8.self)
        }
        var lines = ["cordis-bench all: median of \(settings.rounds) run(s) [lowest – highest]"]
        // Every key whole (the scale keys run past 40 characters), in one column.
        let width = max(32, samples.order.map(\.count).max() ?? 0)
        for key in samples.order {
            let values = samples.values[key] ?? []
            let label = key.padding(toLength: width, withPad: " ", startingAt: 0)
            lines.append(label + String(
                format: " %12.2f   [%.2f – %.2f]", median(values), values.min() ?? 0, values.max() ?? 0))
        }
        return lines.joined(separator: "\n")
    }

    static func loadAverage() -> String {
        (try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8))
            .map { $0.split(separator: " ").prefix(3).joined(separator: " ") } ?? "unknown"
    }
}
