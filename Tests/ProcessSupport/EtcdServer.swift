import Foundation
import Synchronization
import Testing

/// A real etcd (Debian's `etcd-server`) started by a test: on free loopback ports, with its own data
/// folder inside the test's folder; only its own processes are ended. One member, or a cluster of three.
public final class EtcdServer: Sendable {
    /// One etcd member.
    public struct Member: Sendable {
        /// The member's name.
        public let name: String
        /// Its client port.
        public let clientPort: UInt16
        /// Its peer port.
        public let peerPort: UInt16
        /// Its data folder.
        public let dataDirectory: String
        /// Its client URL.
        public var clientURL: String { "http://127.0.0.1:\(clientPort)" }
        /// Its peer URL.
        public var peerURL: String { "http://127.0.0.1:\(peerPort)" }
    }

    /// The etcd executable.
    public static let executable = URL(fileURLWithPath: "/usr/bin/etcd")
    /// Whether etcd is installed (tests that need it are skipped otherwise).
    public static var isInstalled: Bool { FileManager.default.isExecutableFile(atPath: executable.path) }

    /// The members.
    public let members: [Member]
    private let folder: TestFolder
    private let processes: ProcessTable

    private final class ProcessTable: Sendable {
        let table = Mutex<[String: NodeProcess]>([:])
    }

    /// The `--discovery` setting that names every member.
    public var discovery: String { "etcd:" + members.map(\.clientURL).joined(separator: ",") }

    /// Starts `count` members (1 or 3) in `folder` and waits until each serves clients.
    public init(in folder: TestFolder, members count: Int = 1) async throws {
        self.folder = folder
        var members: [Member] = []
        for index in 0..<count {
            let ports = try LoopbackPorts.free(2)
            members.append(Member(
                name: "e\(index)", clientPort: ports[0], peerPort: ports[1], dataDirectory: folder.path("etcd-e\(index)")))
        }
        self.members = members
        self.processes = ProcessTable()
        for member in members { try await start(member.name, fresh: true) }
        for member in members {
            let process = try #require(processes.table.withLock { $0[member.name] })
            let ready = await process.waitForLine(containing: "ready to serve client requests", timeout: .seconds(30))
            if !ready { Issue.record("etcd \(member.name) did not start: \(process.text.suffix(2000))") }
            try #require(ready)
        }
    }

    /// Starts member `name` (again, on its ports and data folder).
    public func start(_ name: String, fresh: Bool = false) async throws {
        guard let member = members.first(where: { $0.name == name }) else { return }
        let cluster = members.map { "\($0.name)=\($0.peerURL)" }.joined(separator: ",")
        let arguments = [
            "--name", member.name, "--data-dir", member.dataDirectory,
            "--listen-client-urls", member.clientURL, "--advertise-client-urls", member.clientURL,
            "--listen-peer-urls", member.peerURL, "--initial-advertise-peer-urls", member.peerURL,
            "--initial-cluster", cluster, "--initial-cluster-state", fresh ? "new" : "existing",
            "--initial-cluster-token", "cordis-test",
            "--heartbeat-interval", "50", "--election-timeout", "500",
        ]
        let process = try NodeProcess(
            name: "etcd-\(name)", arguments: arguments, directory: folder.url, environment: ["ETCD_UNSUPPORTED_ARCH": ""],
            executable: Self.executable)
        processes.table.withLock { $0[name] = process }
    }

    /// Starts member `name` again and waits until it serves clients.
    public func restart(_ name: String) async throws {
        try await start(name)
        let process = try #require(processes.table.withLock { $0[name] })
        try #require(await process.waitForLine(containing: "ready to serve client requests", timeout: .seconds(30)))
    }

    /// The process of member `name`.
    public func process(_ name: String) -> NodeProcess? { processes.table.withLock { $0[name] } }

    /// Kills member `name` (SIGKILL) and waits for it.
    public func kill(_ name: String) async {
        await process(name)?.stop()
    }

    /// The name of the current leader, as `etcdctl endpoint status` of the members that answer reports it.
    public func leader() async -> String? {
        for member in members {
            // Spawned and reaped by the harness, awaited: never Foundation's Process, never a blocked thread.
            guard let run = try? await ChildProcess.run(
                URL(fileURLWithPath: "/usr/bin/etcdctl"),
                ["--endpoints", member.clientURL, "--command-timeout", "2s", "endpoint", "status", "-w", "json"],
                environment: ["ETCDCTL_API": "3", "PATH": "/usr/bin:/bin"], deadline: .seconds(10)),
                run.termination?.status == 0
            else { continue }
            guard let list = try? JSONSerialization.jsonObject(with: Data(run.output.utf8)) as? [[String: Any]],
                  let status = list.first?["Status"] as? [String: Any],
                  let header = status["header"] as? [String: Any],
                  let own = header["member_id"] as? NSNumber, let leader = status["leader"] as? NSNumber
            else { continue }
            if own == leader { return member.name }
        }
        return nil
    }

    /// The end of each member's output (at most `characters` of each), for a failure's report.
    public func logs(characters: Int = 4_000) -> String {
        members.map { member in
            "--- etcd \(member.name):\n" + String(process(member.name)?.text.suffix(characters) ?? "(not started)")
        }.joined(separator: "\n")
    }

    /// Kills every member.
    public func stop() async {
        for process in processes.table.withLock({ Array($0.values) }) { await process.stop() }
    }
}
