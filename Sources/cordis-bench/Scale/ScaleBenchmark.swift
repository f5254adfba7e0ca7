import Cordis
import CordisControl
import CordisWire
import Foundation

/// `cordis-bench scale`: N real `cordis-node` processes on this machine, in the embedded mesh and in
/// etcd mode. Node 0 provides `clock`; every other node runs a `greeter` (a consumer of `clock`), and
/// odd nodes provide a `counter` too. For each mode and N it measures the time from launch until every
/// greeter is active, the links each node holds, the messages each node sends per second while idle
/// by kind (heartbeats, membership, announcements, and in etcd mode its requests to etcd; the mean, the
/// median node and the busiest node), read from
/// each node's `traffic` counters, the whole cluster's idle CPU (etcd included), the time
/// from disabling the clock on node 0 until every greeter is `pending`, and how long a cluster-wide
/// `status` takes.
@CordisActor
enum ScaleBenchmark {
    enum Mode: String, CaseIterable {
        case mesh
        case etcd
    }

    /// The kinds of message counted as idle traffic: everything but calls and control requests.
    static let idleKinds = ["heartbeat", "membership", "announcement", "etcd"]

    struct Figures {
        var rows: [[String: Double]] = []
        var ratios: [String: Double] = [:]
    }

    static func run(sizes: [Int], idleWindow: Duration = .seconds(5)) async throws -> Figures {
        var figures = Figures()
        var largest: [Mode: Int] = [:]
        var byMode: [Mode: [Int: [String: Double]]] = [:]
        for mode in Mode.allCases {
            for size in sizes {
                do {
                    let row = try await measure(mode: mode, nodes: size, idleWindow: idleWindow)
                    figures.rows.append(row)
                    byMode[mode, default: [:]][size] = row
                    largest[mode] = max(largest[mode] ?? 0, size)
                } catch {
                    FileHandle.standardError.write(Data("scale: \(mode) with \(size) nodes failed: \(error)\n".utf8))
                    figures.rows.append(["etcd": mode == .etcd ? 1 : 0, "nodes": Double(size), "failed": 1])
                }
            }
        }
        for mode in Mode.allCases {
            figures.ratios["\(mode.rawValue)_largest_n"] = Double(largest[mode] ?? 0)
            guard let rows = byMode[mode], let small = sizes.first(where: { rows[$0] != nil }),
                  let big = sizes.last(where: { rows[$0] != nil }), big > small,
                  let first = rows[small], let last = rows[big]
            else { continue }
            for key in ["settle_s", "links_per_node", "idle_msgs_per_node_per_s", "idle_cpu_percent", "withdraw_to_pending_s", "status_s"] {
                guard let a = first[key], let b = last[key], a > 0 else { continue }
                figures.ratios["\(mode.rawValue) \(key) n\(big)/n\(small)"] = b / a
            }
        }
        return figures
    }

    /// One cluster of `nodes` nodes in `mode`.
    static func measure(mode: Mode, nodes: Int, idleWindow: Duration) async throws -> [String: Double] {
        let folder = NSTemporaryDirectory() + "cordis-scale-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        var etcd: Process?
        var discovery: [String] = []
        var children: [Process] = []
        defer {
            for child in children where child.isRunning { kill(child.processIdentifier, SIGKILL) }
            if let etcd, etcd.isRunning { kill(etcd.processIdentifier, SIGKILL) }
            for child in children { child.waitUntilExit() }
            etcd?.waitUntilExit()
        }
        if mode == .etcd {
            let (process, url) = try await startEtcd(folder: folder)
            etcd = process
            discovery = ["--discovery", "etcd:\(url)", "--lease-ttl", "2"]
        }
        let executable = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
            .deletingLastPathComponent().appendingPathComponent("cordis-node").path
        let names = (0..<nodes).map { "n\($0)" }
        let launched = ContinuousClock.now
        for (index, name) in names.enumerated() {
            var entries: [String] = []
            if index == 0 { entries.append(#"{"id": "clock", "plugin": "clock"}"#) }
            if index > 0 { entries.append(#"{"id": "greeter", "plugin": "greeter"}"#) }
            if index % 2 == 1 { entries.append(#"{"id": "counter", "plugin": "counter"}"#) }
            let file = "\(folder)/\(name).json"
            try "{\"version\": 1, \"entries\": [\(entries.joined(separator: ", "))]}".write(
                toFile: file, atomically: true, encoding: .utf8)
            var arguments = ["--name", name, "--entries", file, "--listen", "unix:\(folder)/\(name).sock", "--log-level", "warn"]
            arguments += ["--heartbeat-interval", "0.5", "--heartbeat-timeout", "5"]
            if mode == .mesh, index > 0 { arguments += ["--peer", "unix:\(folder)/n0.sock"] }
            arguments += discovery
            let process = Process()
            process.executableURL = URL(fileURLWithPath: executable)
            process.arguments = arguments
            _ = FileManager.default.createFile(atPath: "\(folder)/\(name).log", contents: nil)
            let log = FileHandle(forWritingAtPath: "\(folder)/\(name).log")
            process.standardOutput = FileHandle.nullDevice
            process.standardError = log ?? FileHandle.nullDevice
            try process.run()
            children.append(process)
        }
        // Settled: every greeter active, its clock from n0.
        var clients: [String: ControlClient] = [:]
        defer { for client in clients.values { Task { await client.close() } } }
        let limit = ContinuousClock.now + .seconds(Int64(60 + nodes))
        for name in names {
            while clients[name] == nil {
                if ContinuousClock.now > limit {
                    let log = (try? String(contentsOfFile: "\(folder)/\(name).log", encoding: .utf8)) ?? ""
                    throw BenchmarkError("\(name) never listened: \(log.suffix(300))")
                }
                if let client = try? await ControlClient.connect(to: Address(parsing: "unix:\(folder)/\(name).sock"), name: "bench") {
                    clients[name] = client
                } else {
                    try await Task.sleep(for: .milliseconds(20))
                }
            }
        }
        try await awaitGreeters(in: names.dropFirst(), "active", folder: folder, clients: &clients, until: limit)
        let settle = (ContinuousClock.now - launched).seconds
        // Links per node, from each node's own member list.
        var links = 0
        for name in names {
            let members = try await ask(name, .members, folder: folder, clients: &clients)
            let list = members["members"]?.arrayValue ?? []
            links += list.filter { $0["reachable"]?.boolValue == true && $0["self"]?.boolValue != true }.count
        }
        // Idle traffic and CPU over the window. The bench's console links are closed meanwhile, so
        // their heartbeats are not counted; its own requests count as `control`, which is left out.
        let pids = children.map(\.processIdentifier) + (etcd.map { [$0.processIdentifier] } ?? [])
        var trafficBefore: [String: JSONValue] = [:]
        for name in names { trafficBefore[name] = try await ask(name, .traffic, folder: folder, clients: &clients) }
        for client in clients.values { await client.close() }
        clients.removeAll()
        let cpuBefore = pids.map(cpuTicks)
        let windowStart = ContinuousClock.now
        try await Task.sleep(for: idleWindow)
        let cpuAfter = pids.map(cpuTicks)
        let window = (ContinuousClock.now - windowStart).seconds
        var sent: [String: Double] = [:]
        var perNode: [Double] = []
        for name in names {
            let after = try await ask(name, .traffic, folder: folder, clients: &clients)
            var own = 0.0
            for kind in Self.idleKinds {
                let delta = (after["sent"]?[kind]?.doubleValue ?? 0) - (trafficBefore[name]?["sent"]?[kind]?.doubleValue ?? 0)
                sent[kind, default: 0] += delta
                own += delta
            }
            perNode.append(own / window)
        }
        perNode.sort()
        let ticks = zip(cpuAfter, cpuBefore).map { $0 - $1 }.reduce(0, +)
        let hertz = Double(sysconf(Int32(_SC_CLK_TCK)))
        let cpuPercent = Double(ticks) / hertz / window * 100
        // A cluster-wide status through n1.
        let statusStart = ContinuousClock.now
        let status = try await ask("n1", .status, args: ["cluster": true], folder: folder, clients: &clients)
        let statusSeconds = (ContinuousClock.now - statusStart).seconds
        let reported = status["nodes"]?.arrayValue?.count ?? 0
        // Withdrawal on n0 until every greeter is pending.
        let withdrawStart = ContinuousClock.now
        _ = try await ask("n0", .disable, args: ["entry": "clock"], folder: folder, clients: &clients)
        try await awaitGreeters(in: names.dropFirst(), "pending", folder: folder, clients: &clients, until: ContinuousClock.now + .seconds(60))
        let withdraw = (ContinuousClock.now - withdrawStart).seconds
        return [
            "etcd": mode == .etcd ? 1 : 0, "nodes": Double(nodes), "settle_s": settle,
            "links_per_node": Double(links) / Double(nodes),
            "idle_msgs_per_node_per_s": Self.idleKinds.map { sent[$0] ?? 0 }.reduce(0, +) / window / Double(nodes),
            "idle_msgs_median_node_per_s": perNode.isEmpty ? 0 : perNode[perNode.count / 2],
            "idle_msgs_busiest_node_per_s": perNode.last ?? 0,
            "idle_heartbeats_per_node_per_s": (sent["heartbeat"] ?? 0) / window / Double(nodes),
            "idle_membership_per_node_per_s": ((sent["membership"] ?? 0) + (sent["announcement"] ?? 0)) / window / Double(nodes),
            "idle_etcd_per_node_per_s": (sent["etcd"] ?? 0) / window / Double(nodes),
            "idle_cpu_percent": cpuPercent, "status_s": statusSeconds, "status_nodes": Double(reported),
            "withdraw_to_pending_s": withdraw,
        ]
    }

    /// Sends `command` to node `name`, connecting again (up to three times) when its console link was
    /// lost: on a loaded machine a node may drop a console link whose heartbeats came late.
    static func ask(
        _ name: String, _ command: ControlCommand, args: JSONObject = [:], folder: String, clients: inout [String: ControlClient]
    ) async throws -> JSONValue {
        var lastError: any Error = BenchmarkError("no console link to \(name)")
        for _ in 0..<3 {
            if clients[name] == nil {
                clients[name] = try? await ControlClient.connect(to: Address(parsing: "unix:\(folder)/\(name).sock"), name: "bench")
            }
            guard let client = clients[name] else { continue }
            do {
                return try await client.request(command, args: args, timeout: .seconds(60))
            } catch let error as ControlFailure {
                throw error
            } catch {
                lastError = error
                clients[name] = nil
            }
        }
        throw lastError
    }

    /// Waits until the greeter of every node in `names` is in `state`.
    static func awaitGreeters(
        in names: ArraySlice<String>, _ state: String, folder: String, clients: inout [String: ControlClient],
        until limit: ContinuousClock.Instant
    ) async throws {
        for name in names {
            while true {
                if ContinuousClock.now > limit { throw BenchmarkError("\(name)'s greeter never became \(state)") }
                let answer: JSONValue
                do {
                    answer = try await clients[name]?.request(.status) ?? .null
                } catch {
                    // A console link lost under load: connect again.
                    clients[name] = try? await ControlClient.connect(to: Address(parsing: "unix:\(folder)/\(name).sock"), name: "bench")
                    try await Task.sleep(for: .milliseconds(100))
                    continue
                }
                let fibers = answer["nodes"]?[0]?["fibers"]?.arrayValue ?? []
                if fibers.contains(where: { $0["entry"]?.stringValue == "greeter" && $0["state"]?.stringValue == state }) { break }
                try await Task.sleep(for: .milliseconds(20))
            }
        }
    }

    /// Starts a one-member etcd on free loopback ports; returns it and its client URL.
    static var etcdInstalled: Bool { FileManager.default.isExecutableFile(atPath: "/usr/bin/etcd") }

    static func startEtcd(folder: String) async throws -> (Process, String) {
        guard etcdInstalled else {
            throw BenchmarkError("etcd mode needs /usr/bin/etcd (Debian's etcd-server)")
        }
        let client = try freePort()
        let peer = try freePort()
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/etcd")
        process.arguments = [
            "--name", "scale", "--data-dir", "\(folder)/etcd", "--listen-client-urls", "http://127.0.0.1:\(client)",
            "--advertise-client-urls", "http://127.0.0.1:\(client)", "--listen-peer-urls", "http://127.0.0.1:\(peer)",
            "--initial-advertise-peer-urls", "http://127.0.0.1:\(peer)", "--initial-cluster", "scale=http://127.0.0.1:\(peer)",
        ]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        let url = "http://127.0.0.1:\(client)"
        let limit = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < limit {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = client.bigEndian
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            close(fd)
            if connected == 0 {
                try await Task.sleep(for: .milliseconds(300))
                return (process, url)
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        throw BenchmarkError("etcd did not start")
    }

    static func freePort() throws -> UInt16 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0 else { throw BenchmarkError("no free port") }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        return UInt16(bigEndian: address.sin_port)
    }

    /// The CPU ticks (user and system) a process used so far (`/proc/PID/stat`).
    static func cpuTicks(_ pid: Int32) -> Int {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = text.lastIndex(of: ")")
        else { return 0 }
        let fields = text[text.index(after: close)...].split(separator: " ")
        // After the command: state is field 3, utime 14 and stime 15 (1-based over the whole line).
        guard fields.count > 13 else { return 0 }
        return (Int(fields[11]) ?? 0) + (Int(fields[12]) ?? 0)
    }
}
