import Cordis
import CordisNode
import CordisWire
import Foundation
import Synchronization

/// `cordis-bench soak --minutes M [--rate N] [--json]`: three real `cordis-node` processes (a, b, c), one
/// console on each calling `clock.now` and `counter.add` continuously (through proxies where the
/// provider is on another node), while a fourth console toggles the only providers (a's clock, b's
/// counter) off and on. Reports every failed call by cause, split into those whose provider was being
/// withdrawn or was off (expected) and all others (none expected), and each node's resident memory and
/// open file descriptors after warm-up and at the end.
enum SoakBenchmark {
    /// The nodes and what they run: a provides the clock, b the counter, c consumes both.
    static let layout: [(name: String, entries: String)] = [
        ("a", #"[{"id": "clock", "plugin": "clock"}, {"id": "greeter", "plugin": "greeter"}]"#),
        ("b", #"[{"id": "counter", "plugin": "counter"}, {"id": "greeter", "plugin": "greeter"}]"#),
        ("c", #"[{"id": "badge", "plugin": "badge"}, {"id": "greeter", "plugin": "greeter"}]"#),
    ]
    /// The toggled providers: (node, entry, service).
    static let toggled: [(node: String, entry: String, service: String)] = [("a", "clock", "clock"), ("b", "counter", "counter")]

    /// What one node's process holds at a moment.
    struct Usage: Sendable {
        var residentKiB: Int
        var descriptors: Int
    }

    /// The outcome of the calls, shared by the callers.
    struct Tally: Sendable {
        var calls = 0
        var succeeded = 0
        /// Failures while the provider was being withdrawn or off, by error code.
        var expected: [String: Int] = [:]
        /// Every other failure, by error code, with the first few messages.
        var unexpected: [String: Int] = [:]
        var unexpectedSamples: [String] = []
        var toggles = 0
        var toggleFailures = 0
    }

    /// The tally behind a lock, shared by the callers and the toggler.
    final class Shared: Sendable {
        private let state = Mutex(Tally())
        func withLock<T>(_ body: (inout Tally) -> T) -> T { state.withLock { body(&$0) } }
    }

    /// Which services are in a toggle window: from the disable request until a grace period after the
    /// enable answered (remote nodes learn of the new provider by its announcement, a moment later).
    final class Windows: Sendable {
        private let state = Mutex<[String: ContinuousClock.Instant?]>([:])
        /// Marks `service` off from now until `reopened(_:)` plus the grace.
        func closing(_ service: String) { state.withLock { $0[service] = .some(nil) } }
        func reopened(_ service: String, grace: Duration) {
            state.withLock { $0[service] = .some(ContinuousClock.now + grace) }
        }
        /// True while `service` is off or within its grace period.
        func covers(_ service: String) -> Bool {
            state.withLock { state in
                guard let entry = state[service] else { return false }
                guard let until = entry else { return true }
                return ContinuousClock.now < until
            }
        }
    }

    static func main(arguments: [String], json: Bool) async -> Int32 {
        func value(_ flag: String) -> Double? {
            arguments.firstIndex(of: flag).flatMap { $0 + 1 < arguments.count ? Double(arguments[$0 + 1]) : nil }
        }
        let minutes = value("--minutes") ?? 10
        let rate = value("--rate") ?? 100
        guard minutes > 0, minutes <= 24 * 60, rate >= 1, rate <= 10_000 else {
            FileHandle.standardError.write(Data("soak: --minutes must be in (0, 1440] and --rate in [1, 10000]\n".utf8))
            return 64
        }
        do {
            try await run(duration: .seconds(minutes * 60), callsPerSecond: rate, json: json)
            return 0
        } catch {
            FileHandle.standardError.write(Data("soak: \(error)\n".utf8))
            return 1
        }
    }

    static func run(duration: Duration, callsPerSecond: Double, json: Bool) async throws {
        let folder = try WireLatencyBench.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        var processes: [String: Process] = [:]
        defer { for process in processes.values where process.isRunning { process.terminate() } }
        for (index, node) in layout.enumerated() {
            try #"{"version": 1, "entries": \#(node.entries)}"#.write(
                toFile: "\(folder)/\(node.name).json", atomically: true, encoding: .utf8)
            var arguments = [
                "--name", node.name, "--entries", "\(folder)/\(node.name).json", "--listen", "unix:\(folder)/\(node.name).sock",
                "--heartbeat-interval", "0.5", "--heartbeat-timeout", "5", "--log-level", "warn",
            ]
            for earlier in layout.prefix(index) { arguments += ["--peer", "unix:\(folder)/\(earlier.name).sock"] }
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
                .deletingLastPathComponent().appendingPathComponent("cordis-node")
            process.arguments = arguments
            _ = FileManager.default.createFile(atPath: "\(folder)/\(node.name).log", contents: nil)
            let log = try FileHandle(forWritingTo: URL(fileURLWithPath: "\(folder)/\(node.name).log"))
            process.standardOutput = log
            process.standardError = log
            try process.run()
            processes[node.name] = process
            try await awaitSocket("\(folder)/\(node.name).sock", within: .seconds(20))
        }
        var consoles: [ControlClient] = []
        for node in layout {
            consoles.append(try await ControlClient.connect(
                to: try Address(parsing: "unix:\(folder)/\(node.name).sock"), name: "soak-\(node.name)"))
        }
        let toggler = try await ControlClient.connect(to: try Address(parsing: "unix:\(folder)/a.sock"), name: "soak-toggler")
        // Every consumer active: the cluster is linked.
        for console in consoles { try await awaitActive(console, within: .seconds(30)) }

        let tally = Shared()
        let windows = Windows()
        let clock = ContinuousClock()
        let started = clock.now
        let warmUp = min(duration / 10, .seconds(60))
        let end = started + duration
        var first: [String: Usage] = [:]
        for (name, process) in processes { first[name] = usage(of: process.processIdentifier) }
        var warm: [String: Usage] = [:]
        var peak: [String: Usage] = [:]

        try await withThrowingTaskGroup(of: Void.self) { group in
            for console in consoles {
                group.addTask {
                    try await callLoop(console: console, until: end, rate: callsPerSecond, tally: tally, windows: windows)
                }
            }
            group.addTask {
                try await toggleLoop(console: toggler, until: end, tally: tally, windows: windows)
            }
            // The sampler: usage once after warm-up, then the peak until the end.
            try await Task.sleep(until: started + warmUp, clock: clock)
            for (name, process) in processes { warm[name] = usage(of: process.processIdentifier) }
            peak = warm
            while clock.now < end {
                try await Task.sleep(for: .seconds(5))
                for (name, process) in processes {
                    guard let now = usage(of: process.processIdentifier) else { continue }
                    peak[name] = Usage(
                        residentKiB: max(peak[name]?.residentKiB ?? 0, now.residentKiB),
                        descriptors: max(peak[name]?.descriptors ?? 0, now.descriptors))
                }
            }
            try await group.waitForAll()
        }
        // Every provider back on, the cluster settled: the end figures.
        for console in consoles { try await awaitActive(console, within: .seconds(30)) }
        var final: [String: Usage] = [:]
        for (name, process) in processes { final[name] = usage(of: process.processIdentifier) }
        let alive = processes.values.allSatisfy(\.isRunning)
        for console in consoles { await console.close() }
        await toggler.close()

        let result = tally.withLock { $0 }
        let seconds = (clock.now - started).seconds
        var rows: [[String: Double]] = []
        for (index, node) in layout.enumerated() {
            rows.append([
                "node": Double(index + 1),
                "rss_start_kib": Double(first[node.name]?.residentKiB ?? -1),
                "rss_warm_kib": Double(warm[node.name]?.residentKiB ?? -1),
                "rss_end_kib": Double(final[node.name]?.residentKiB ?? -1),
                "rss_peak_kib": Double(peak[node.name]?.residentKiB ?? -1),
                "fds_start": Double(first[node.name]?.descriptors ?? -1),
                "fds_warm": Double(warm[node.name]?.descriptors ?? -1),
                "fds_end": Double(final[node.name]?.descriptors ?? -1),
                "fds_peak": Double(peak[node.name]?.descriptors ?? -1),
            ])
        }
        var notes: [String: Double] = [
            "seconds": seconds, "warm_up_seconds": warmUp.seconds, "calls": Double(result.calls), "succeeded": Double(result.succeeded),
            "failed_while_withdrawn": Double(result.expected.values.reduce(0, +)),
            "failed_other": Double(result.unexpected.values.reduce(0, +)),
            "toggles": Double(result.toggles), "toggle_failures": Double(result.toggleFailures),
            "nodes_alive_at_end": alive ? 1 : 0,
        ]
        for (code, count) in result.expected { notes["failed_while_withdrawn[\(code)]"] = Double(count) }
        for (code, count) in result.unexpected { notes["failed_other[\(code)]"] = Double(count) }
        report("soak (node: 1=a 2=b 3=c)", rows, ratios: notes)
        if !json {
            for sample in result.unexpectedSamples { print("unexpected failure: \(sample)") }
        }
    }

    /// One console's calls: `clock.now` and `counter.add` alternately, `rate` a second, until `end`.
    static func callLoop(
        console: ControlClient, until end: ContinuousClock.Instant, rate: Double, tally: Shared, windows: Windows
    ) async throws {
        let clock = ContinuousClock()
        let interval = Duration.seconds(1 / rate)
        var next = clock.now
        var turn = 0
        while clock.now < end {
            turn += 1
            let (service, method, args): (String, String, JSONObject) = turn % 2 == 0
                ? ("clock", "now", [:]) : ("counter", "add", ["_0": 1])
            let before = windows.covers(service)
            do {
                _ = try await console.request(
                    .call, args: ["service": .string(service), "method": .string(method), "args": .object(args)],
                    timeout: .seconds(20))
                tally.withLock { $0.calls += 1; $0.succeeded += 1 }
            } catch {
                let code: String
                let message: String
                if let failure = error as? ControlFailure {
                    code = failure.code
                    message = failure.message
                } else {
                    code = "client"
                    message = "\(error)"
                }
                let withdrawn = code == "withdrawn" || message.contains("no provider of \(service)")
                let expected = withdrawn && (before || windows.covers(service))
                tally.withLock { tally in
                    tally.calls += 1
                    if expected {
                        tally.expected[code, default: 0] += 1
                    } else {
                        tally.unexpected[code, default: 0] += 1
                        if tally.unexpectedSamples.count < 10 { tally.unexpectedSamples.append("\(service).\(method): \(code): \(message)") }
                    }
                }
            }
            next += interval
            if next > clock.now { try await Task.sleep(until: next, clock: clock) } else { next = clock.now }
        }
    }

    /// Turns the toggled providers off and on in turn (off for one second, on for two) until `end`.
    static func toggleLoop(
        console: ControlClient, until end: ContinuousClock.Instant, tally: Shared, windows: Windows
    ) async throws {
        var index = 0
        while ContinuousClock.now < end {
            let target = toggled[index % toggled.count]
            index += 1
            windows.closing(target.service)
            do {
                _ = try await console.request(.disable, node: target.node, args: ["entry": .string(target.entry)], timeout: .seconds(30))
                try await Task.sleep(for: .seconds(1))
                _ = try await console.request(.enable, node: target.node, args: ["entry": .string(target.entry)], timeout: .seconds(30))
                tally.withLock { $0.toggles += 1 }
            } catch {
                tally.withLock { $0.toggleFailures += 1 }
                _ = try? await console.request(.enable, node: target.node, args: ["entry": .string(target.entry)], timeout: .seconds(30))
            }
            windows.reopened(target.service, grace: .seconds(1))
            try await Task.sleep(for: .seconds(2))
        }
    }

    /// Waits until every entry of the console's node that has a fiber is active.
    static func awaitActive(_ console: ControlClient, within limit: Duration) async throws {
        let deadline = ContinuousClock.now + limit
        var last: JSONValue = .null
        while ContinuousClock.now < deadline {
            let status = try await console.request(.status)
            last = status
            let node = status.objectValue?["nodes"]?.arrayValue?.first?.objectValue
            let entries = node?["entries"]?.arrayValue?.compactMap(\.objectValue) ?? []
            if !entries.isEmpty, entries.allSatisfy({ $0["state"]?.stringValue == "active" }) { return }
            try await Task.sleep(for: .milliseconds(50))
        }
        throw BenchmarkError("not every entry became active within \(limit): \(last)")
    }

    /// Waits until a node's socket file exists.
    static func awaitSocket(_ path: String, within limit: Duration) async throws {
        let deadline = ContinuousClock.now + limit
        while !FileManager.default.fileExists(atPath: path) {
            guard ContinuousClock.now < deadline else { throw BenchmarkError("\(path) did not appear within \(limit)") }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    /// Resident memory (VmRSS) and open descriptors of `pid`, from `/proc`.
    static func usage(of pid: Int32) -> Usage? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
        let rss = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") }
            .flatMap { line in line.split(whereSeparator: { $0 == " " || $0 == "\t" }).dropFirst().first.flatMap { Int($0) } }
        let descriptors = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd").count) ?? -1
        guard let rss else { return nil }
        return Usage(residentKiB: rss, descriptors: descriptors)
    }
}
