import CordisProcessTesting
import Cordis
import CordisNode
import CordisWire
import Foundation
import Synchronization
import Testing

/// One `cordis-node` of a test cluster: its process, socket, entries file and the arguments it was
/// started with (so it can be restarted the same way).
struct ClusterMember: Sendable {
    /// Heartbeat settings for a loaded 2-core machine: a heartbeat every 0.2 s, and 3 s of silence before
    /// a peer is declared down, so a busy (not dead) node is not dropped; a killed node is noticed at
    /// once anyway, when its socket closes.
    static let timing = ["--heartbeat-interval", "0.2", "--heartbeat-timeout", "3"]

    let name: String
    let folder: TestFolder
    let arguments: [String]
    let environment: [String: String]
    let process: NodeProcess

    /// The Unix socket the member listens on.
    var socket: String { folder.path("\(name).sock") }
    /// The member's entries file.
    var entriesFile: String { folder.path("\(name).json") }
    /// The member's address.
    var address: String { "unix:\(socket)" }

    /// Writes `entries` (a JSON array of entries) as the member's entries file, starts it listening on its
    /// socket and dialling `peers` with the heartbeat flags `timing`, and waits for its `listening on` line.
    static func start(
        _ name: String, in folder: TestFolder, entries: String, peers: [ClusterMember] = [], extra: [String] = [],
        timing: [String] = timing, environment: [String: String] = [:], executable: URL = NodeProcess.nodeExecutable
    ) async throws -> ClusterMember {
        try folder.write("\(name).json", "{\"version\": 1, \"entries\": \(entries)}")
        var arguments = [
            "--name", name, "--entries", folder.path("\(name).json"), "--listen", "unix:\(folder.path("\(name).sock"))",
        ] + timing
        for peer in peers { arguments += ["--peer", peer.address] }
        arguments += extra
        return try await launch(name, folder: folder, arguments: arguments, environment: environment, executable: executable)
    }

    /// Starts a member with exactly `arguments` and waits for its `listening on` line.
    static func launch(
        _ name: String, folder: TestFolder, arguments: [String], environment: [String: String] = [:],
        executable: URL = NodeProcess.nodeExecutable
    ) async throws -> ClusterMember {
        let process = try NodeProcess(
            name: name, arguments: arguments, directory: folder.url, environment: environment, executable: executable)
        let member = ClusterMember(
            name: name, folder: folder, arguments: arguments, environment: environment, process: process)
        let up = await process.waitForLine(containing: "listening on")
        if !up { await process.stop() }
        try #require(up, "\(name) did not start")
        return member
    }

    /// Starts the member again with the same arguments (a new incarnation), after it exited.
    func restarted() async throws -> ClusterMember {
        try await Self.launch(name, folder: folder, arguments: arguments, environment: environment)
    }

    /// A console link to this member.
    func control(secrets: ClusterSecrets? = nil) async throws -> ControlClient {
        try await ControlClient.connect(to: Address(parsing: address), name: "test-console", secrets: secrets)
    }

    /// Waits for a line containing `fragment` in this member's output.
    @discardableResult
    func waitForLine(containing fragment: String, timeout: Duration = .seconds(20)) async -> Bool {
        await process.waitForLine(containing: fragment, timeout: timeout)
    }

    /// Waits for `fragment` to appear `count` times in this member's output.
    @discardableResult
    func waitForOccurrences(of fragment: String, count: Int, timeout: Duration = .seconds(20)) async -> Bool {
        await process.waitForOccurrences(of: fragment, count: count, timeout: timeout)
    }

    /// Kills the member (SIGKILL) if it still runs and waits for it.
    func stop() async {
        await process.stop()
    }
}

/// Reading a node's status through its control link.
extension ControlClient {
    /// The node's own status object.
    func nodeStatus() async throws -> JSONObject {
        let status = try await request(.status)
        return try #require(status.objectValue?["nodes"]?.arrayValue?.first?.objectValue)
    }

    /// The fiber of entry `entry` in the node's status, if it has one.
    func fiber(ofEntry entry: String) async throws -> JSONObject? {
        let fibers = try await nodeStatus()["fibers"]?.arrayValue ?? []
        return fibers.compactMap(\.objectValue).first { $0["entry"]?.stringValue == entry }
    }

    /// The state of entry `entry` (nil when it has no fiber).
    func state(ofEntry entry: String) async throws -> String? {
        let entries = try await nodeStatus()["entries"]?.arrayValue ?? []
        return entries.compactMap(\.objectValue).first { $0["id"]?.stringValue == entry }?["state"]?.stringValue
    }

    /// Asks for the status until entry `entry`'s fiber is in `state`, each request awaiting the previous
    /// answer (no sleeping), for at most `timeout` and a bounded number of requests; returns that fiber, or
    /// nil (recording an issue) when it never got there.
    ///
    /// The request bound is a backstop the deadline reaches first: a release-built node answers a status
    /// request in well under 100 µs, and a bound of 20,000 (this helper's first) ran out in about a
    /// second and a half, before a 2-second lease could end.
    func awaitFiber(
        ofEntry entry: String, inState state: String, timeout: Duration = .seconds(20),
        maxRequests: Int = ControlClient.maxPollRequests
    ) async throws -> JSONObject? {
        let start = ContinuousClock.now
        let deadline = start + timeout
        var last: JSONObject?
        var requests = 0
        while requests < maxRequests, ContinuousClock.now < deadline {
            requests += 1
            last = try await fiber(ofEntry: entry)
            if let last, last["state"]?.stringValue == state { return last }
        }
        Issue.record(
            "entry \(entry) did not reach \(state) within \(timeout) (\(requests) requests in \(ContinuousClock.now - start)); last seen: \(String(describing: last))")
        return nil
    }

    /// The node that provides `service` to entry `entry`'s fiber (from its `injects`).
    func providerNode(ofEntry entry: String, service: String) async throws -> String? {
        try await fiber(ofEntry: entry)?["injects"]?.objectValue?[service]?.objectValue?["node"]?.stringValue
    }
}

/// Counting lines in a member's output.
extension String {
    /// How many times `fragment` occurs.
    func occurrences(of fragment: String) -> Int {
        components(separatedBy: fragment).count - 1
    }

    /// The lines that contain `fragment`, in order.
    func lines(containing fragment: String) -> [String] {
        split(separator: "\n").map(String.init).filter { $0.contains(fragment) }
    }

    /// The offset of the first line containing `fragment` (nil when none does).
    func lineIndex(containing fragment: String) -> Int? {
        split(separator: "\n").firstIndex { $0.contains(fragment) }
    }
}

/// A test's cluster: its folder, the members it started and the console links it opened; `run` ends
/// every one of them (by pid) and removes the folder, whatever the test's outcome.
final class TestCluster: Sendable {
    let folder: TestFolder
    private let started = Mutex<[NodeProcess]>([])
    private let clients = Mutex<[ControlClient]>([])

    private init(folder: TestFolder) {
        self.folder = folder
    }

    /// Runs `body` with a fresh cluster, then stops what it started and removes its folder. When `body`
    /// throws (a console request that was not answered, say), the last lines of every member's output
    /// are printed first, so the failure says what the nodes were doing.
    static func run(_ body: (TestCluster) async throws -> Void) async throws {
        let cluster = TestCluster(folder: try TestFolder())
        do {
            try await body(cluster)
        } catch {
            print(cluster.outputTails(after: error))
            await cluster.shutdown()
            throw error
        }
        await cluster.shutdown()
    }

    /// The last `lines` lines of each member's output, headed by the error that ended the test.
    private func outputTails(after error: any Error, lines: Int = 40) -> String {
        var report = "the test threw \(error); what its nodes said last:"
        for process in started.withLock({ $0 }) {
            let tail = process.text.split(separator: "\n", omittingEmptySubsequences: false).suffix(lines)
            report += "\n--- \(process.name) ---\n" + tail.joined(separator: "\n")
        }
        return report
    }

    /// Starts a member (see `ClusterMember.start`) that is stopped at the end.
    func start(
        _ name: String, entries: String, peers: [ClusterMember] = [], extra: [String] = [],
        timing: [String] = ClusterMember.timing, environment: [String: String] = [:],
        executable: URL = NodeProcess.nodeExecutable
    ) async throws -> ClusterMember {
        try await adopt {
            try await ClusterMember.start(
                name, in: folder, entries: entries, peers: peers, extra: extra, timing: timing, environment: environment,
                executable: executable)
        }
    }

    /// Starts a member with exactly `arguments` (see `ClusterMember.launch`), stopped at the end.
    func launch(_ name: String, arguments: [String], environment: [String: String] = [:]) async throws -> ClusterMember {
        try await adopt { try await ClusterMember.launch(name, folder: folder, arguments: arguments, environment: environment) }
    }

    /// Restarts `member` (after it exited); the new process is stopped at the end.
    func restart(_ member: ClusterMember) async throws -> ClusterMember {
        try await adopt { try await member.restarted() }
    }

    /// Registers a member the test started some other way, so it is stopped at the end.
    func track(_ member: ClusterMember) {
        started.withLock { $0.append(member.process) }
    }

    /// Starts `cordis-node` with `arguments` in the folder without waiting for anything (for runs that
    /// are expected to exit); it is stopped at the end if it still runs.
    func spawn(_ name: String, arguments: [String], environment: [String: String] = [:]) throws -> NodeProcess {
        let process = try NodeProcess(name: name, arguments: arguments, directory: folder.url, environment: environment)
        started.withLock { $0.append(process) }
        return process
    }

    /// A console link to `member`, closed at the end.
    func control(_ member: ClusterMember, secrets: ClusterSecrets? = nil) async throws -> ControlClient {
        let client = try await member.control(secrets: secrets)
        clients.withLock { $0.append(client) }
        return client
    }

    private func adopt(_ make: () async throws -> ClusterMember) async throws -> ClusterMember {
        let member = try await make()
        track(member)
        return member
    }

    private func shutdown() async {
        for client in clients.withLock({ $0 }) { await client.close() }
        for process in started.withLock({ $0 }) { await process.stop() }
        folder.remove()
    }
}

/// Reading a status object.
extension JSONObject {
    /// Every fiber of this node status whose plugin is `plugin`.
    func fibers(plugin: String) -> [JSONObject] {
        (self["fibers"]?.arrayValue ?? []).compactMap(\.objectValue).filter { $0["plugin"]?.stringValue == plugin }
    }

    /// The fiber of entry `entry` in this node status.
    func fiber(entry: String) -> JSONObject? {
        (self["fibers"]?.arrayValue ?? []).compactMap(\.objectValue).first { $0["entry"]?.stringValue == entry }
    }

    /// The node providing `service` to this fiber.
    func provider(_ service: String) -> String? {
        self["injects"]?.objectValue?[service]?.objectValue?["node"]?.stringValue
    }
}

extension ControlClient {
    /// Asks for the node's status until `condition` holds, each request awaiting the previous answer (no
    /// sleeping), for at most `timeout` and a bounded number of requests; false (recording an issue) when
    /// it never held.
    func awaitStatus(
        _ what: String, timeout: Duration = .seconds(20), maxRequests: Int = ControlClient.maxPollRequests,
        _ condition: (JSONObject) -> Bool
    ) async throws -> Bool {
        let start = ContinuousClock.now
        let deadline = start + timeout
        var requests = 0
        var last: JSONObject?
        while requests < maxRequests, ContinuousClock.now < deadline {
            requests += 1
            let status = try await nodeStatus()
            if condition(status) { return true }
            last = status
        }
        Issue.record(
            "status never showed \(what) within \(timeout) (\(requests) requests in \(ContinuousClock.now - start)); last seen: \(String(describing: last))")
        return false
    }

    /// The bound on the status requests of one wait (`awaitFiber`, `awaitStatus`): a backstop that a
    /// wait's deadline reaches first at any speed a node answers at (10,000,000 requests take minutes).
    static let maxPollRequests = 10_000_000
}
