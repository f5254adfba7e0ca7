import Cordis
import CordisControl
import CordisWire
import Foundation
import Synchronization

/// One node of a `NodeCluster`: its process (the current one: a restart starts a new one), its log,
/// its status, the waits a test needs, calls, entry changes and process faults.
///
/// Reads and changes go through a console link the kit holds to the node (directly, never through a
/// relay, so a cut link never hides a node from the test). Thread-safe.
public final class ClusterNode: Sendable {
    /// The node's name.
    public let name: String
    /// The node's own folder.
    public let directory: URL
    /// Its entries file.
    public let entriesFile: URL
    /// The flags it is started with (the same at every restart).
    public let arguments: [String]
    private let environment: [String: String]
    private let relay: LinkRelay?
    let options: ClusterOptions
    let secretFile: String?
    let certificates: String?
    let roster: NodeCluster.Roster
    /// Bumped at each event the node pushes on the kit's link: the waits' cue to read again.
    let changes = ChangeSignal()
    private let state = Mutex<State>(State())

    private struct State {
        var process: NodeProcess?
        var address: String?
        var control: ControlClient?
        /// The connection under way, awaited by every caller that needs the link meanwhile.
        var connecting: Task<ControlClient, any Error>?
        /// The output of the node's earlier lives (before restarts), kept for reports.
        var earlierLog = ""
        var ended = false
    }

    init(
        name: String, directory: URL, entriesFile: URL, arguments: [String], environment: [String: String],
        options: ClusterOptions, secretFile: String?, certificates: String?, roster: NodeCluster.Roster, relay: LinkRelay?
    ) {
        self.name = name
        self.directory = directory
        self.entriesFile = entriesFile
        self.arguments = arguments
        self.environment = environment
        self.options = options
        self.secretFile = secretFile
        self.certificates = certificates
        self.roster = roster
        self.relay = relay
    }

    // MARK: - Process

    /// The current process (the last one started).
    public var process: NodeProcess {
        // Set by `launch` before the node is ever handed out.
        state.withLock { $0.process! }
    }

    /// Whether the current process runs (a stopped one, SIGSTOP, runs).
    public var isRunning: Bool { state.withLock { $0.process?.process.isRunning ?? false } }

    /// The address the node listens on (`unix:…` or `tcp:127.0.0.1:PORT`), as it printed it.
    public var address: String { state.withLock { $0.address ?? "" } }

    /// The address the other nodes dial: the kit's relay when there is one, else the node's own.
    var dialAddress: String { relay?.address ?? address }

    /// Everything the node printed, stdout and stderr, in all its lives (a line `--- restarted ---`
    /// between them).
    public var log: String { state.withLock { $0.earlierLog + ($0.process?.text ?? "") } }

    func launch() async throws {
        let process: NodeProcess
        do {
            process = try NodeProcess(
                name: name, arguments: arguments, directory: directory, environment: environment,
                executable: options.executable.url)
        } catch {
            throw failure(.startFailed, "cannot start \(name) (\(options.executable.url.path))", underlying: error)
        }
        state.withLock { state in
            if let old = state.process { state.earlierLog += old.text + "--- restarted ---\n" }
            state.process = process
            state.address = nil
            state.control = nil
            state.connecting = nil
        }
        let listening = await process.waitUntil("listening on", timeout: options.startTimeout) {
            $0.contains("listening on ") || $0.contains("\"listening on")
        }
        guard listening, let address = Self.listenAddress(in: process.text) else {
            process.signal(SIGKILL)
            _ = await process.exitCode(timeout: .seconds(10))
            let how = process.process.isRunning ? "did not print \"listening on\" within \(options.startTimeout)" : "exited (\(process.process.terminationStatus)) before it listened"
            throw failure(.startFailed, "\(name) \(how)")
        }
        state.withLock { $0.address = address }
        relay?.forward(to: address)
    }

    /// The address in the first `listening on ADDR` line (text or JSON log format).
    static func listenAddress(in text: String) -> String? {
        for line in text.split(separator: "\n") {
            guard let range = line.range(of: "listening on ") else { continue }
            let rest = line[range.upperBound...]
            let address = rest.prefix { $0 != "\"" && $0 != " " }
            if address.hasPrefix("unix:") || address.hasPrefix("tcp:") { return String(address) }
        }
        return nil
    }

    /// Kills the node (SIGKILL) and waits for it to exit: a crash, nothing is withdrawn in order.
    public func kill() async {
        let process = self.process
        process.signal(SIGCONT)
        process.signal(SIGKILL)
        _ = await process.exitCode(timeout: .seconds(20))
        await dropControl()
    }

    /// Stops the node in order (SIGTERM: its services are withdrawn, peers told) and returns its exit code.
    ///
    /// - Throws: `TestKitError` `.timeout` when it has not exited within `deadline` (it is then killed).
    @discardableResult
    public func terminate(within deadline: Duration = .seconds(30)) async throws -> Int32 {
        let process = self.process
        process.signal(SIGCONT)
        process.signal(SIGTERM)
        let code = await process.exitCode(timeout: deadline)
        await dropControl()
        guard let code, process.process.termination != nil, process.process.terminationReason == .exit else {
            throw failure(.timeout, "\(name) did not exit within \(deadline) of SIGTERM")
        }
        return code
    }

    /// Stops the node's process (SIGSTOP) and waits until every thread of it is stopped: it answers
    /// nothing, its links stay open, its peers find it silent (`suspected`, then `down`).
    ///
    /// - Throws: `TestKitError` `.timeout` when it did not stop, `.notRunning` when it is not running.
    public func pause(within deadline: Duration = .seconds(10)) async throws {
        guard isRunning else { throw failure(.notRunning, "\(name) is not running: nothing to pause") }
        guard await process.pause(timeout: deadline) else {
            throw failure(.timeout, "\(name) did not stop within \(deadline) of SIGSTOP")
        }
    }

    /// Lets a paused node go on (SIGCONT).
    public func resume() {
        process.signal(SIGCONT)
    }

    /// Starts the node again under the same name, folder, entries file and flags (a new incarnation),
    /// after it exited (`kill`, `terminate`), and waits until it listens; the relays forward to it. In
    /// etcd mode, after a kill, it is started again every 100 ms until the old life's lease has ended
    /// and the node accepts the name (within `startTimeout`).
    ///
    /// - Throws: `TestKitError` `.invalidArgument` while it still runs, `.startFailed` when it does not start.
    public func restart() async throws {
        guard !isRunning else {
            throw failure(.invalidArgument, "\(name) still runs: kill or terminate it before restarting it")
        }
        let end = ContinuousClock.now + options.startTimeout
        while true {
            do {
                try await launch()
                return
            } catch let error as TestKitError where error.code == .startFailed && options.discovery == .etcd
                && state.withLock({ $0.process?.text.contains("is registered in etcd by a live member") ?? false })
                && ContinuousClock.now < end
            {
                // In etcd mode a killed node's registration holds its name until its lease ends
                // (`--lease-ttl`, 2 s by default); the node refuses to start before. Try again shortly.
                try await Task.sleep(for: .milliseconds(100))
            }
        }
    }

    /// Kills the process without waiting (the cluster's last resort, from `deinit`).
    func abandon() {
        state.withLock { $0.process }?.signal(SIGCONT)
        state.withLock { $0.process }?.signal(SIGKILL)
        relay?.stop()
    }

    /// Ends the node for good: its console link, its process (SIGKILL), its relay.
    func end() async {
        let first = state.withLock { state -> Bool in
            defer { state.ended = true }
            return !state.ended
        }
        guard first else { return }
        await dropControl()
        if let process = state.withLock({ $0.process }) {
            process.signal(SIGCONT)
            process.signal(SIGKILL)
            _ = await process.exitCode(timeout: .seconds(20))
        }
        relay?.stop()
    }

    /// An error of `code` carrying every node's log (this one's too, while it starts).
    func failure(_ code: TestKitError.Code, _ message: String, underlying: (any Error)? = nil) -> TestKitError {
        var logs = roster.logs()
        if !logs.contains(where: { $0.node == name }) { logs.append((name, log)) }
        return TestKitError(code, message, logs: logs, underlying: underlying)
    }

    // MARK: - The console link

    /// The kit's console link to the node, opened at first use and again after a restart or a lost link.
    func control() async throws -> ControlClient {
        if let open = state.withLock({ $0.control }), await open.closeReason == nil { return open }
        guard isRunning else { throw failure(.notRunning, "\(name) is not running") }
        // One connection at a time: concurrent waits on this node share it instead of replacing each
        // other's link.
        let task = state.withLock { state -> Task<ControlClient, any Error> in
            if let connecting = state.connecting { return connecting }
            let stale = state.control
            state.control = nil
            let task = Task { [self] in
                await stale?.close()
                let client = try await connectConsole()
                // The node's own events on this link wake the waits; the link's end wakes them too.
                let changes = self.changes
                let events = client.events
                Task {
                    for await _ in events { changes.bump() }
                    changes.bump()
                }
                _ = try? await client.request(.subscribe, args: ["follow": true, "history": false, "cluster": false])
                return client
            }
            state.connecting = task
            return task
        }
        do {
            let client = try await task.value
            let installed = state.withLock { state -> Bool in
                guard state.connecting == task else { return state.control === client }
                state.connecting = nil
                state.control = client
                return true
            }
            // A restart meanwhile made this link stale.
            guard installed else {
                await client.close()
                return try await control()
            }
            return client
        } catch {
            state.withLock { state in
                if state.connecting == task { state.connecting = nil }
            }
            throw failure(.notRunning, "cannot reach \(name) at \(address)", underlying: error)
        }
    }

    /// The name of the kit's console (its operator certificate's name with TLS).
    static let consoleName = "cordis-test-kit"

    /// A new console link to the node, with the cluster's secret or the kit's operator certificate.
    func connectConsole() async throws -> ControlClient {
        let secrets = try secretFile.map { try ClusterSecrets.load(files: [$0]) }
        let tls = try certificates.map { folder in
            try TLSContext(TLSConfiguration(
                certificateFile: "\(folder)/operator-\(Self.consoleName).pem", keyFile: "\(folder)/operator-\(Self.consoleName).key",
                caFile: "\(folder)/ca.pem"))
        }
        return try await ControlClient.connect(
            to: try Address(parsing: address), name: Self.consoleName, secrets: secrets, tls: tls, timeout: .seconds(10))
    }

    private func dropControl() async {
        let client = state.withLock { state -> ControlClient? in
            defer {
                state.control = nil
                state.connecting = nil
            }
            return state.control
        }
        await client?.close()
    }

    /// Sends `command` to the node and returns its answer.
    ///
    /// - Throws: `TestKitError` `.refused` with the node's error code and message, `.notRunning` when it
    ///   cannot be reached.
    public func request(_ command: ControlCommand, args: JSONObject = [:], timeout: Duration = .seconds(30)) async throws -> JSONValue {
        let client = try await control()
        do {
            return try await client.request(command, args: args, timeout: timeout)
        } catch let refusal as ControlFailure {
            throw failure(.refused, "\(name) refused \(command.rawValue): \(refusal.code): \(refusal.message)", underlying: refusal)
        } catch {
            await dropControl()
            throw failure(.notRunning, "\(name) did not answer \(command.rawValue)", underlying: error)
        }
    }
}
