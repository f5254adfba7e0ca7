import CordisControl
import CordisJSON
import CordisWire
import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// `cordis-bench fairness`: what consoles that follow events cost the other users of a node, with two
/// real `cordis-node` processes (A, which the consoles use, and B, whose entry is toggled).
///
/// - **Fan-out**: `links` console links to A, each holding `follows` cluster-wide follow subscriptions
///   (and reading them); an admin console toggles B's entry `toggles` times through A. Reported: the
///   toggles' time with and without the followers (same run), A's CPU seconds per toggle, and the events
///   the followers received.
/// - **Non-readers**: `nonReaders` console links to A that each hold `follows` follow subscriptions and
///   never read; four times the toggles; then each pipelines 200 requests for the whole history.
///   Reported: A's resident memory before, with them, and once they closed, and how many A closed.
///
/// `CORDIS_BENCH_NODE` names the `cordis-node` binary to run (default: the one beside this program), so
/// two builds can be compared on the same machine.
enum FairnessBenchmark {
    struct Settings {
        var links = 48
        var follows = 16
        var toggles = 100
        var nonReaders = 24
    }

    static func run(_ settings: Settings) async throws -> (rows: [[String: Double]], ratios: [String: Double]) {
        let folder = try WireLatencyBench.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let nodes = try Nodes(folder: folder)
        defer { nodes.stop() }
        let admin = try await nodes.console(name: "admin")
        try await nodes.awaitLinked(admin)

        // The baseline: the toggles with nobody following.
        let quiet = try await toggle(admin, times: settings.toggles, pid: nodes.a.processIdentifier)
        let quietCPU = quiet.cpu

        // Followers that read every event: 4 links first (64 subscriptions), then as many as asked for
        // (of which the node may refuse some: what it accepted is reported).
        var rows: [[String: Double]] = [
            ["links": 0, "subscriptions": 0, "toggles_s": quiet.seconds,
             "a_cpu_ms_per_toggle": quietCPU * 1000 / Double(settings.toggles)],
        ]
        var ratios: [String: Double] = [:]
        for links in [4, settings.links] {
            var followers: [ControlClient] = []
            let received = Counter()
            var accepted = 0
            for index in 0..<links {
                let client = try await nodes.console(name: "follower\(index)")
                for _ in 0..<settings.follows {
                    if (try? await client.request(.subscribe, args: ["follow": true, "history": false, "cluster": true])) != nil {
                        accepted += 1
                    }
                }
                let events = client.events
                Task.detached {
                    for await _ in events { received.add(1) }
                }
                followers.append(client)
            }
            let before = received.value
            let followed = try await toggle(admin, times: settings.toggles, pid: nodes.a.processIdentifier)
            let delivered = received.value - before
            for client in followers { await client.close() }
            rows.append([
                "links": Double(links), "subscriptions": Double(accepted), "toggles_s": followed.seconds,
                "a_cpu_ms_per_toggle": followed.cpu * 1000 / Double(settings.toggles), "events_delivered": Double(delivered),
                "toggles_failed": Double(followed.failures),
            ])
            ratios["toggles_\(links)_links_vs_none"] = followed.seconds / quiet.seconds
        }

        // Consoles that subscribe and never read.
        let rssBefore = ProcessProbe.residentMB(pid: nodes.a.processIdentifier)
        var silent: [Link] = []
        let loop = try EventLoop(name: "non-readers")
        for index in 0..<settings.nonReaders {
            let identity = PeerIdentity(role: .console, name: "silent\(index)", incarnation: UUID().uuidString.lowercased())
            let link = try await Link.connect(
                to: nodes.addressOfA, on: loop, configuration: HandshakeConfiguration(identity: identity, secrets: nil, tls: nil))
            for id in 1...settings.follows {
                try link.enqueue(.request(ControlRequest(
                    id: id, command: .subscribe, args: ["follow": true, "history": true, "cluster": true])))
            }
            silent.append(link)
        }
        let stalled = try await toggle(admin, times: settings.toggles * 4, pid: nodes.a.processIdentifier)
        // Then each asks for the whole history again and again (pipelined: it reads no answer).
        for link in silent {
            for id in 1...200 {
                try? link.enqueue(.request(ControlRequest(
                    id: 100 + id, command: .subscribe, args: ["follow": false, "history": true, "cluster": true])))
            }
        }
        _ = try? await admin.request(.status)
        let rssPeak = ProcessProbe.peakResidentMB(pid: nodes.a.processIdentifier)
        let open = silent.filter { $0.connection.closeError == nil }.count
        if let reason = silent.lazy.compactMap({ $0.connection.closeError }).first {
            print("a closed a non-reader: \(reason)")
        }
        for link in silent { link.close(reason: "done") }
        await loop.shutdown()
        // Let A see the closes: one status round trip after them.
        _ = try? await admin.request(.status)
        // A node gives freed memory back a second after a console leaves: read it after that.
        try await Task.sleep(for: .seconds(2))
        let rssAfter = ProcessProbe.residentMB(pid: nodes.a.processIdentifier)
        await admin.close()
        ratios["non_readers"] = Double(settings.nonReaders)
        ratios["non_readers_still_open"] = Double(open)
        ratios["non_readers_toggles_s"] = stalled.seconds
        ratios["non_readers_toggles_failed"] = Double(stalled.failures)
        ratios["a_rss_mb_before"] = rssBefore
        ratios["a_peak_rss_mb_with_non_readers"] = rssPeak
        ratios["a_rss_mb_after_they_left"] = rssAfter
        return (rows, ratios)
    }

    /// How long toggles took and A's CPU time over them.
    struct Timing {
        var seconds: Double
        var cpuBefore: Double
        var cpuAfter: Double
        var failures: Int
        var cpu: Double { cpuAfter - cpuBefore }
    }

    /// Disables and enables B's `clock` entry through A, `times` times in all, one after another.
    static func toggle(_ admin: ControlClient, times: Int, pid: Int32) async throws -> Timing {
        let cpuBefore = ProcessProbe.cpuSeconds(pid: pid)
        let start = ContinuousClock.now
        var failures = 0
        var lastFailure: String?
        for index in 0..<times {
            let command: ControlCommand = index % 2 == 0 ? .disable : .enable
            do {
                _ = try await admin.request(command, node: "b", args: ["entry": "clock"], timeout: .seconds(120))
            } catch {
                failures += 1
                lastFailure = "\(error)"
            }
        }
        let elapsed = start.duration(to: .now)
        if let lastFailure { print("\(failures) of \(times) toggles failed, the last with: \(lastFailure)") }
        return Timing(seconds: Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18,
                      cpuBefore: cpuBefore, cpuAfter: ProcessProbe.cpuSeconds(pid: pid), failures: failures)
    }

    final class Counter: Sendable {
        private let count = Mutex(0)
        func add(_ n: Int) { count.withLock { $0 += n } }
        var value: Int { count.withLock { $0 } }
    }

    /// A and B as child processes, A peering with B.
    final class Nodes {
        let a: Process
        let b: Process
        let addressOfA: Address

        init(folder: String) throws {
            let binary = ProcessInfo.processInfo.environment["CORDIS_BENCH_NODE"]
                ?? URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
                .deletingLastPathComponent().appendingPathComponent("cordis-node").path
            try #"{"version":1,"entries":[]}"#.write(toFile: "\(folder)/a.json", atomically: true, encoding: .utf8)
            try #"{"version":1,"entries":[{"id":"clock","plugin":"clock"}]}"#.write(
                toFile: "\(folder)/b.json", atomically: true, encoding: .utf8)
            b = try Self.spawn(binary, ["--name", "b", "--entries", "\(folder)/b.json", "--listen", "unix:\(folder)/b.sock"])
            a = try Self.spawn(binary, ["--name", "a", "--entries", "\(folder)/a.json", "--listen", "unix:\(folder)/a.sock",
                                        "--peer", "unix:\(folder)/b.sock"])
            addressOfA = try Address(parsing: "unix:\(folder)/a.sock")
        }

        private static func spawn(_ binary: String, _ arguments: [String]) throws -> Process {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: binary)
            process.arguments = arguments + ["--log-level", "error"]
            process.standardOutput = FileHandle.nullDevice
            try process.run()
            return process
        }

        /// A console link to A, once A listens (bounded: 10 s).
        func console(name: String) async throws -> ControlClient {
            let deadline = ContinuousClock.now + .seconds(10)
            while true {
                do {
                    return try await ControlClient.connect(to: addressOfA, name: name)
                } catch {
                    guard ContinuousClock.now < deadline else { throw error }
                    try await Task.sleep(for: .milliseconds(20))
                }
            }
        }

        /// Waits until A answers for B's entries (bounded: 10 s).
        func awaitLinked(_ admin: ControlClient) async throws {
            let deadline = ContinuousClock.now + .seconds(10)
            while (try? await admin.request(.status, node: "b")) == nil {
                guard ContinuousClock.now < deadline else { throw BenchmarkError("a never reached b") }
                try await Task.sleep(for: .milliseconds(20))
            }
        }

        func stop() {
            for process in [a, b] where process.isRunning {
                kill(process.processIdentifier, SIGKILL)
                process.waitUntilExit()
            }
        }
    }
}
