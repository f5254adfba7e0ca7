import Foundation
import Synchronization

/// A real etcd (Debian's `etcd-server`) started by a test: on free loopback ports, with its own data
/// folders; only its own processes are ended. One member, or a cluster of three. `NodeCluster` starts
/// one for a cluster in etcd mode (`ClusterOptions.discovery`). Thread-safe.
///
/// The data folders are in memory (`/dev/shm`) when the machine has it, else in the test's folder. etcd
/// syncs each write to disk; when the suites beside it load the disk, one sync can hold etcd's leader
/// for seconds, and etcd before 3.4.31 (Debian 12 ships 3.4.23) may then revoke every lease once the
/// held leader goes on (etcd issue 15247): a fault of that etcd under a loaded disk, not the behaviour
/// these tests check.
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
    /// util-linux's `setpriv`, which starts etcd so that it dies with the test process.
    static let setpriv = URL(fileURLWithPath: "/usr/bin/setpriv")
    /// Whether etcd is installed (tests that need it are skipped otherwise).
    public static var isInstalled: Bool { FileManager.default.isExecutableFile(atPath: executable.path) }

    /// The members.
    public let members: [Member]
    private let folder: TestFolder
    /// The folder in memory the data folders are in, removed by `stop()` (nil: they are in `folder`).
    private let memoryFolder: URL?
    private let processes: ProcessTable

    private final class ProcessTable: Sendable {
        let table = Mutex<[String: NodeProcess]>([:])
    }

    /// The `--discovery` setting that names every member.
    public var discovery: String { "etcd:" + members.map(\.clientURL).joined(separator: ",") }

    /// Starts `count` members (1 or 3) in `folder` and waits until each serves clients.
    ///
    /// - Throws: `TestKitError` `.startFailed` (with etcd's output) when a member does not serve clients
    ///   within 30 s; `ChildProcess.SpawnError` when etcd cannot be started.
    public init(in folder: TestFolder, members count: Int = 1) async throws {
        self.folder = folder
        var memoryFolder: URL?
        if FileManager.default.isWritableFile(atPath: "/dev/shm") {
            let url = URL(fileURLWithPath: "/dev/shm/cordis-etcd-\(UUID().uuidString.prefix(8))", isDirectory: true)
            if (try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: false)) != nil { memoryFolder = url }
        }
        self.memoryFolder = memoryFolder
        var members: [Member] = []
        for index in 0..<count {
            let ports = try LoopbackPorts.free(2)
            let data = memoryFolder.map { $0.appendingPathComponent("etcd-e\(index)").path } ?? folder.path("etcd-e\(index)")
            members.append(Member(name: "e\(index)", clientPort: ports[0], peerPort: ports[1], dataDirectory: data))
        }
        self.members = members
        self.processes = ProcessTable()
        do {
            for member in members { try await start(member.name, fresh: true) }
            for member in members { try await awaitReady(member.name) }
        } catch {
            // Nobody gets this server to stop: end what started, and remove the folder in memory.
            await stop()
            throw error
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
        // etcd is not a Cordis node and does not watch its parent: `setpriv` asks the kernel to kill it
        // when the test process ends (PR_SET_PDEATHSIG, kept across setpriv's exec of etcd), so a test
        // killed with SIGKILL leaves no etcd behind either.
        let dieWithParent = FileManager.default.isExecutableFile(atPath: Self.setpriv.path)
        let process = try NodeProcess(
            name: "etcd-\(name)",
            arguments: dieWithParent ? ["--pdeathsig", "KILL", "--", Self.executable.path] + arguments : arguments,
            directory: folder.url, environment: ["ETCD_UNSUPPORTED_ARCH": ""],
            executable: dieWithParent ? Self.setpriv : Self.executable)
        processes.table.withLock { $0[name] = process }
    }

    /// Starts member `name` again and waits until it serves clients.
    ///
    /// - Throws: `TestKitError` `.startFailed` when it does not serve clients within 30 s.
    public func restart(_ name: String) async throws {
        try await start(name)
        try await awaitReady(name)
    }

    /// Waits until member `name` serves clients.
    private func awaitReady(_ name: String) async throws {
        guard let process = processes.table.withLock({ $0[name] }) else {
            throw TestKitError(.invalidArgument, "etcd has no member \(name)")
        }
        let marker = "ready to serve client requests"
        guard await process.waitUntil(marker, timeout: .seconds(30), { $0.contains(marker) }) else {
            throw TestKitError(.startFailed, "etcd \(name) did not start", logs: [("etcd-\(name)", String(process.text.suffix(2000)))])
        }
    }

    /// The process of member `name`.
    public func process(_ name: String) -> NodeProcess? { processes.table.withLock { $0[name] } }

    /// Kills member `name` (SIGKILL) and waits for it.
    public func kill(_ name: String) async {
        await process(name)?.stop()
    }

    /// Runs `etcdctl` with `arguments` against the first member; its output, or nil when it failed.
    public func control(_ arguments: [String]) async -> String? {
        guard let member = members.first,
              let run = try? await ChildProcess.run(
                URL(fileURLWithPath: "/usr/bin/etcdctl"),
                ["--endpoints", member.clientURL, "--command-timeout", "5s"] + arguments,
                environment: ["ETCDCTL_API": "3", "PATH": "/usr/bin:/bin"], deadline: .seconds(15)),
              run.termination?.status == 0
        else { return nil }
        return run.output
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

    /// Kills every member (SIGKILL) without waiting, and removes the data folders kept in memory: the
    /// last resort of a cluster nobody shut down.
    func abandon() {
        for process in processes.table.withLock({ Array($0.values) }) { process.signal(SIGKILL) }
        if let memoryFolder { try? FileManager.default.removeItem(at: memoryFolder) }
    }

    /// Kills every member and removes the data folders kept in memory.
    public func stop() async {
        for process in processes.table.withLock({ Array($0.values) }) { await process.stop() }
        if let memoryFolder { try? FileManager.default.removeItem(at: memoryFolder) }
    }
}
