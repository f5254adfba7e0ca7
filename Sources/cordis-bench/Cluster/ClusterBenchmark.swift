import CCordisShim
import Cordis
import CordisNode
import CordisWire
import Foundation

/// `cordis-bench cluster`: node A runs in this process (a consumer of `clock`), node B is a real
/// `cordis-node` process providing it. Measures the remote call round trip through A's proxy next to a
/// raw echo of the same bytes (pinned to CPU 0 and unpinned), the time from disabling the provider on
/// B until A's consumer is `pending`, from killing B until then, and from stopping B with SIGSTOP
/// until A declares it down.
@CordisActor
enum ClusterBenchmark {
    struct Figures {
        var rows: [[String: Double]] = []
        var notes: [String: Double] = [:]
    }

    static func run(iterations: Int, toggles: Int) async throws -> Figures {
        var figures = Figures()
        for pinned in [true, false] {
            _ = ccordis_set_process_affinity(pinned ? 0 : -1)
            let placement = pinned ? 0.0 : 1.0
            let folder = try WireLatencyBench.temporaryFolder()
            let raw = try WireLatencyBench.EchoPeer(mode: "raw", listen: "unix:\(folder)/raw.sock", pinned: pinned, secret: nil)
            let sample = try WireLatencyBench.callFrame(secrets: nil)
            let rawTimes = try WireLatencyBench.rawRoundTrips(to: raw.address, frame: sample, iterations: iterations)
            raw.stop()
            let cluster = try await Pair.start(folder: folder, pinned: pinned)
            let callTimes = try await cluster.callRoundTrips(iterations)
            let rawSeries = WireLatencyBench.Series(placement: "", socket: "unix", kind: "raw", samples: rawTimes)
            let callSeries = WireLatencyBench.Series(placement: "", socket: "unix", kind: "call", samples: callTimes)
            figures.rows.append([
                "unpinned": placement, "raw_echo_p50_us": rawSeries.p50, "raw_echo_p99_us": rawSeries.p99,
                "remote_call_p50_us": callSeries.p50, "remote_call_p99_us": callSeries.p99,
                "remote_call_p50_vs_raw": callSeries.p50 / rawSeries.p50,
            ])
            if !pinned {
                let toggleTimes = try await cluster.disableUntilPending(toggles)
                let sorted = toggleTimes.sorted()
                figures.notes["disable_to_pending_p50_ms"] = sorted[sorted.count / 2] * 1000
                figures.notes["disable_to_pending_p99_ms"] = sorted[min(sorted.count - 1, sorted.count * 99 / 100)] * 1000
                figures.notes["kill_to_pending_ms"] = try await cluster.killUntilPending() * 1000
                let restarted = try await Pair.start(folder: folder, pinned: false, reuse: cluster)
                figures.notes["sigstop_to_down_ms"] = try await restarted.stopUntilDown() * 1000
                figures.notes["heartbeat_timeout_ms"] = 2000
                await restarted.finish()
            } else {
                await cluster.finish()
            }
            try? FileManager.default.removeItem(atPath: folder)
        }
        _ = ccordis_set_process_affinity(-1)
        return figures
    }

    /// Node A in this process and node B as a child process.
    @CordisActor
    final class Pair {
        let node: Node
        let consumer: Fiber
        var child: Process
        let folder: String
        let pinned: Bool
        let tcp: Bool

        private init(node: Node, consumer: Fiber, child: Process, folder: String, pinned: Bool, tcp: Bool) {
            self.node = node
            self.consumer = consumer
            self.child = child
            self.folder = folder
            self.pinned = pinned
            self.tcp = tcp
        }

        /// B's listening address: a Unix socket in `folder`, or a TCP loopback port chosen once.
        static func addressOfB(folder: String, tcp: Bool) throws -> String {
            guard tcp else { return "unix:\(folder)/b.sock" }
            let portFile = "\(folder)/b.port"
            if let text = try? String(contentsOfFile: portFile, encoding: .utf8) { return "tcp:127.0.0.1:\(text)" }
            let port = try ProcessProbe.freeTCPPort()
            try String(port).write(toFile: portFile, atomically: true, encoding: .utf8)
            return "tcp:127.0.0.1:\(port)"
        }

        /// The secret file of a TCP pair (created once, readable by the owner only).
        static func secretFile(folder: String) throws -> String {
            let path = "\(folder)/secret"
            if !FileManager.default.fileExists(atPath: path) {
                let text = String((0..<48).map { _ in "abcdefghijklmnopqrstuvwxyz0123456789".randomElement() ?? "x" })
                _ = FileManager.default.createFile(atPath: path, contents: Data(text.utf8), attributes: [.posixPermissions: 0o600])
            }
            return path
        }

        static func spawnB(folder: String, pinned: Bool, tcp: Bool = false) throws -> Process {
            let entries = "\(folder)/b.json"
            if !FileManager.default.fileExists(atPath: entries) {
                try #"{"version":1,"entries":[{"id":"clock","plugin":"clock"}]}"#.write(
                    toFile: entries, atomically: true, encoding: .utf8)
            }
            let node = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
                .deletingLastPathComponent().appendingPathComponent("cordis-node").path
            var arguments = ["--name", "b", "--entries", entries, "--listen", try addressOfB(folder: folder, tcp: tcp), "--log-level", "warn"]
            if tcp { arguments += ["--secret-file", try secretFile(folder: folder)] }
            let process = Process()
            if pinned {
                process.executableURL = URL(fileURLWithPath: "/usr/bin/taskset")
                process.arguments = ["-c", "0", node] + arguments
            } else {
                process.executableURL = URL(fileURLWithPath: node)
                process.arguments = arguments
            }
            process.standardOutput = FileHandle.nullDevice
            try process.run()
            return process
        }

        /// Starts node A in this process and B as a child, or uses the B already listening on `external`
        /// (for profiling B under a tool; over TCP, with the secret in the file `CORDIS_BENCH_SECRET_FILE`
        /// names).
        static func start(
            folder: String, pinned: Bool, tcp: Bool = false, reuse previous: Pair? = nil, external: String? = nil
        ) async throws -> Pair {
            let child = external == nil ? try spawnB(folder: folder, pinned: pinned, tcp: tcp) : Process()
            if let previous {
                previous.child = child
                try await previous.awaitConsumer(.active, within: .seconds(20))
                return previous
            }
            var catalog = PluginCatalog()
            catalog.register(FunctionPlugin<NoConfig>(name: "consumer", inject: [ClockServiceKey.self]) { _, _, _ in }, as: "consumer")
            let store = InMemoryEntryStore(EntryTree(entries: [Entry(id: "consumer", plugin: "consumer")]))
            var secrets: ClusterSecrets?
            if tcp {
                let file: String
                if external == nil {
                    file = try secretFile(folder: folder)
                } else if let named = ProcessInfo.processInfo.environment["CORDIS_BENCH_SECRET_FILE"] {
                    file = named
                } else {
                    throw BenchmarkError("a node B reached over TCP needs its secret: set CORDIS_BENCH_SECRET_FILE")
                }
                let text = try String(contentsOfFile: file, encoding: .utf8)
                secrets = try ClusterSecrets(proving: ClusterSecret(bytes: Array(text.utf8), source: "bench"))
            }
            let configuration = NodeConfiguration(
                name: "a", listen: [try Address(parsing: "unix:\(folder)/a.sock")],
                peers: [try Address(parsing: try external ?? addressOfB(folder: folder, tcp: tcp))], secrets: secrets)
            // As in a `cordis-node` at its default level: printed from error, kept from info.
            let context = Context(logLevel: .error, recentLevel: NodeOptions.defaultLogLevel)
            let node = try Node(
                configuration: configuration, catalog: catalog, remoteServices: BuiltinCatalog.remoteServices,
                store: store, context: context)
            try await node.start()
            guard let consumer = node.loader.fiber(for: "consumer") else {
                throw BenchmarkError("the consumer entry has no fiber")
            }
            let pair = Pair(node: node, consumer: consumer, child: child, folder: folder, pinned: pinned, tcp: tcp)
            try await pair.awaitConsumer(.active, within: .seconds(20))
            return pair
        }

        /// Waits until the consumer reaches `state`; returns the seconds it took.
        @discardableResult
        func awaitConsumer(_ state: FiberState, within limit: Duration) async throws -> Double {
            let clock = ContinuousClock()
            let start = clock.now
            while consumer.state != state {
                if clock.now - start > limit {
                    throw BenchmarkError("consumer still \(consumer.state) after \(limit), expected \(state)")
                }
                try await Task.sleep(for: .microseconds(200))
            }
            return (clock.now - start).seconds
        }

        func callRoundTrips(_ iterations: Int) async throws -> [UInt64] {
            guard let record = node.context.currentProvider(of: ClockServiceKey.name), let clock = record.value as? any ClockAPI else {
                throw BenchmarkError("no clock proxy on a")
            }
            for _ in 0..<200 { _ = try await clock.now() }
            var samples: [UInt64] = []
            samples.reserveCapacity(iterations)
            for _ in 0..<iterations {
                let start = DispatchTime.now().uptimeNanoseconds
                _ = try await clock.now()
                samples.append(DispatchTime.now().uptimeNanoseconds - start)
            }
            return samples
        }

        /// Calls completed per second with `inFlight` callers on `CordisActor` calling for `seconds`.
        func throughput(inFlight: Int, seconds: Double) async throws -> Double {
            guard let record = node.context.currentProvider(of: ClockServiceKey.name), let clock = record.value as? any ClockAPI else {
                throw BenchmarkError("no clock proxy on a")
            }
            let start = DispatchTime.now().uptimeNanoseconds
            let end = start + UInt64(seconds * 1e9)
            var callers: [Task<Int, any Error>] = []
            for _ in 0..<inFlight {
                callers.append(Task { @CordisActor in
                    var count = 0
                    while count % 16 != 0 || DispatchTime.now().uptimeNanoseconds < end {
                        _ = try await clock.now()
                        count += 1
                    }
                    return count
                })
            }
            var counts = 0
            for caller in callers { counts += try await caller.value }
            let elapsed = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
            return Double(counts) / elapsed
        }

        /// B's resident memory in MB (from `/proc/PID/status`).
        func childResidentMB() -> Double {
            ProcessProbe.residentMB(pid: child.processIdentifier)
        }

        func disableUntilPending(_ toggles: Int) async throws -> [Double] {
            let console = try await ControlClient.connect(to: try Address(parsing: "unix:\(folder)/b.sock"))
            var times: [Double] = []
            for _ in 0..<toggles {
                let clock = ContinuousClock()
                let start = clock.now
                async let disabled = console.request(.disable, args: ["entry": "clock"])
                try await awaitConsumer(.pending, within: .seconds(20))
                times.append((clock.now - start).seconds)
                _ = try await disabled
                _ = try await console.request(.enable, args: ["entry": "clock"])
                try await awaitConsumer(.active, within: .seconds(20))
            }
            await console.close()
            return times
        }

        func killUntilPending() async throws -> Double {
            let clock = ContinuousClock()
            let start = clock.now
            kill(child.processIdentifier, SIGKILL)
            try await awaitConsumer(.pending, within: .seconds(20))
            let elapsed = (clock.now - start).seconds
            child.waitUntilExit()
            return elapsed
        }

        func stopUntilDown() async throws -> Double {
            let clock = ContinuousClock()
            let start = clock.now
            kill(child.processIdentifier, SIGSTOP)
            while node.connectedPeers.contains("b") {
                if clock.now - start > .seconds(30) { throw BenchmarkError("b was never declared down") }
                try await Task.sleep(for: .milliseconds(1))
            }
            let elapsed = (clock.now - start).seconds
            kill(child.processIdentifier, SIGKILL)
            kill(child.processIdentifier, SIGCONT)
            child.waitUntilExit()
            return elapsed
        }

        func finish() async {
            if child.isRunning {
                kill(child.processIdentifier, SIGKILL)
                child.waitUntilExit()
            }
            await node.stop()
        }
    }
}
