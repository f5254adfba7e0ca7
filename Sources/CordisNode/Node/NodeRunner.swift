import Cordis
import CordisFiles
import CordisDiscovery
import CordisWire
import Dispatch
import FoundationEssentials
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Runs a node process: parses the command line, checks the entries
/// file and the secrets before anything starts, listens (or adopts socket-activated listeners), tells
/// systemd, reloads on SIGHUP and stops in order on SIGTERM or SIGINT.
///
/// `cordis-node` is `NodeRunner.main` with the built-in catalog; a custom node binary passes its own.
@CordisActor
public enum NodeRunner {
    /// Exit codes of `cordis-node`.
    public enum ExitCode {
        /// Clean stop.
        public static let ok: Int32 = 0
        /// Runtime failure (including a shutdown that overran `--shutdown-timeout`).
        public static let failure: Int32 = 1
        /// Bad usage.
        public static let usage: Int32 = 64
        /// The entries file cannot be read or parsed.
        public static let unreadableEntries: Int32 = 66
        /// An address is in use, or (etcd mode) the node's name is registered by a live member.
        public static let addressInUse: Int32 = 69
    }

    /// Runs a node from `arguments` (without the program name) until it is told to stop; returns the
    /// exit code.
    ///
    /// SIGPIPE is ignored for the whole process first: a reader of the node's stdout or stderr that goes
    /// away (`cordis-node … 2>&1 | jq`, then jq exits) never ends the node; its logs go where they still
    /// can (journald, the recent records `events` shows). Every node binary built on this runner, custom
    /// ones included, gets this, and also dies with the process that started it when
    /// `CORDIS_EXIT_WITH_PARENT` names that process (CordisTestKit sets it; see docs/testing.md).
    ///
    /// - Parameters:
    ///   - catalog: the plugins the node can run, for a node of the given name.
    ///   - remoteServices: the services its plugins share across the cluster.
    public static func main(
        arguments: [String],
        catalog: @CordisActor (String) -> PluginCatalog = { BuiltinCatalog.plugins(node: $0) },
        remoteServices: RemoteServiceCatalog = BuiltinCatalog.remoteServices
    ) async -> Int32 {
        StandardStreams.ignoreBrokenPipes()
        // Started by a test kit whose process is already gone: nobody is left to stop this node.
        guard ParentWatch.apply() else { return ExitCode.failure }
        let command: NodeCommand
        do {
            command = try NodeOptionsParser().parse(arguments)
        } catch {
            printError("\(error)")
            return error.exitCode
        }
        switch command {
        case .help(let text):
            printLine(text)
            return ExitCode.ok
        case .version(let text):
            printLine(text)
            return ExitCode.ok
        case .run(let options):
            return await run(options, catalog: catalog(options.name), remoteServices: remoteServices)
        }
    }

    private static func run(_ options: NodeOptions, catalog: PluginCatalog, remoteServices: RemoteServiceCatalog) async -> Int32 {
        // Installed first: a signal that arrives while the node starts is queued and handled once it is
        // up, never by its default action (SIGHUP and SIGTERM would end the process).
        let signals = SignalStream([SIGTERM, SIGINT, SIGHUP])
        let lines = StartupLines(node: options.name, format: options.logFormat)
        func printLine(_ text: String) { lines.out(text) }
        func printError(_ text: String) { lines.error(text) }
        let store = FileEntryStore(url: URL(fileURLWithPath: options.entriesFile))
        do {
            _ = try store.load()
        } catch {
            printError("cannot use entries file \(options.entriesFile): \(error)")
            return ExitCode.unreadableEntries
        }
        var configuration: NodeConfiguration
        do {
            configuration = try makeConfiguration(options)
        } catch {
            printError("\(error)")
            return ExitCode.usage
        }
        let descriptors: DescriptorBudget
        do {
            descriptors = try DescriptorBudget.apply()
        } catch {
            printError("\(error)")
            return ExitCode.failure
        }
        configuration.connectionBudget = descriptors.connections
        // Records below the node's level are neither printed nor kept: a debug line per call costs
        // nothing unless `--log-level debug` asked for it.
        let context = Context(logLevel: options.logLevel, recentLevel: options.logLevel)
        _ = try? context.logger.exporter(NodeLogExporter.make(node: options.name, level: options.logLevel, format: options.logFormat))
        let logger = context.logger("node")
        logger.debug(
            "open-file limit \(descriptors.limit): up to \(descriptors.connections) connections, "
                + "\(DescriptorBudget.reserve) descriptors kept in reserve")
        if options.insecure, configuration.tls == nil,
           options.listen.contains(where: { if case .tcp = $0 { return true } else { return false } }) {
            logger.warn("listening on TCP without authentication (--insecure)")
        }
        let node: Node
        do {
            node = try Node(
                configuration: configuration, catalog: catalog, remoteServices: remoteServices, store: store,
                context: context)
        } catch {
            printError("cannot start: \(error)")
            return ExitCode.failure
        }
        let notifier = ServiceNotifier()
        let activated: [ActivatedSocket]
        do {
            activated = try SocketActivation.takeSockets(unsettingEnvironment: true)
        } catch {
            printError("\(error)")
            return ExitCode.usage
        }
        do {
            try await node.start(adopting: activated.map(\.fd))
        } catch let error as TransportError where error.code == .addressInUse {
            printError("\(error)")
            await node.stop()
            return ExitCode.addressInUse
        } catch let error as NameTakenError {
            printError(error.message)
            await node.stop()
            return ExitCode.addressInUse
        } catch let error as NodeStartError {
            printError(error.message)
            await node.stop()
            return ExitCode.usage
        } catch let error as EntryStoreError {
            printError("\(error)")
            await node.stop()
            return ExitCode.unreadableEntries
        } catch {
            printError("cannot start: \(error)")
            await node.stop()
            return ExitCode.failure
        }
        for address in node.listeningAddresses {
            printLine("listening on \(address)")
        }
        let metrics: MetricsEndpoint?
        do {
            metrics = try options.metricsListen.map { try node.serveMetrics(on: $0) }
        } catch {
            printError("--metrics-listen: \(error)")
            await node.stop()
            return (error as? TransportError)?.code == .addressInUse ? ExitCode.addressInUse : ExitCode.failure
        }
        defer { metrics?.close() }
        if let metrics { printLine("metrics on \(metrics.url)") }
        logger.info("node \(options.name) started (incarnation \(configuration.incarnation))")
        _ = try? notifier.ready()
        let watchdog = Task { await notifier.pingWatchdogUntilCancelled() }
        let reporter = Task { @CordisActor in
            while !Task.isCancelled {
                _ = try? notifier.status(
                    "\(node.connectedPeers.count) peers, \(node.context.fibers.count - 1) fibers")
                await node.loop.pause(for: .seconds(5))
            }
        }
        defer {
            watchdog.cancel()
            reporter.cancel()
        }
        for await signal in signals.stream {
            if signal == SIGHUP {
                _ = try? notifier.reloading()
                await node.reloadOnSignal()
                _ = try? notifier.ready()
                continue
            }
            logger.info("stopping on signal \(signal)")
            _ = try? notifier.stopping()
            let finished = await stop(node, within: options.shutdownTimeout)
            if !finished {
                let busy = node.context.fibers.filter { $0.inertia != nil }.map { "\($0.name)#\($0.id) \($0.state)" }
                logger.error("shutdown did not finish within \(options.shutdownTimeout); still busy: \(busy)")
                return ExitCode.failure
            }
            return ExitCode.ok
        }
        return ExitCode.ok
    }

    /// Stops the node; false when it did not finish within `timeout`.
    private static func stop(_ node: Node, within timeout: Duration) async -> Bool {
        let outcome = Outcome()
        let stopping = Task { @CordisActor in
            await node.stop()
            outcome.finish(true)
        }
        let timer = Task { @CordisActor in
            await node.loop.pause(for: timeout)
            outcome.finish(false)
        }
        let finished = await outcome.value()
        timer.cancel()
        if !finished { stopping.cancel() }
        return finished
    }

    static func makeConfiguration(_ options: NodeOptions) throws -> NodeConfiguration {
        let secrets = options.secretFiles.isEmpty ? nil : try ClusterSecrets.load(files: options.secretFiles)
        let group = try options.socketGroup.map(resolve) ?? getgid()
        let policy = PeerPolicy(group: group, allowedUIDs: Set(options.allowedUIDs))
        var configuration = NodeConfiguration(
            name: options.name, listen: options.listen, advertise: options.advertise, peers: options.peers,
            secrets: secrets, peerPolicy: policy, socketGroup: options.socketGroup == nil ? nil : group,
            heartbeatInterval: options.heartbeatInterval, heartbeatTimeout: options.heartbeatTimeout,
            callTimeout: options.callTimeout, withdrawTimeout: options.withdrawTimeout,
            maxFrameSize: options.maxFrameSize)
        configuration.incarnation = UUID().uuidString.lowercased()
        configuration.allowsInsecureTCP = options.insecure
        configuration.tls = try NodeTLS.context(options)
        configuration.security = try NodeSecurity(options)
        if let discovery = options.discovery {
            configuration.etcdEndpoints = try EtcdEndpoint.list(parsing: discovery)
            configuration.leaseTTL = options.leaseTTL
            configuration.idleLinkTimeout = options.idleLinkTimeout
        }
        configuration.consoleBudget = options.consoleBudget
        return configuration
    }

    private static func resolve(_ group: SocketGroup) throws -> UInt32 {
        switch group {
        case .id(let id):
            return id
        case .name(let name):
            guard let entry = getgrnam(name) else {
                throw NodeOptionsError(.invalidValue, "--socket-group: no group named \(name)")
            }
            return entry.pointee.gr_gid
        }
    }

    static func printLine(_ text: String) {
        StandardStreams.printLine(text)
    }

    static func printError(_ text: String) {
        let line = text.hasPrefix("error:") ? text : "error: \(text)"
        StandardStreams.printErrorLine(line)
    }
}

/// A one-shot result shared by two racing tasks.
@CordisActor
private final class Outcome {
    private var result: Bool?
    private var waiter: CheckedContinuation<Bool, Never>?

    func finish(_ value: Bool) {
        guard result == nil else { return }
        result = value
        waiter?.resume(returning: value)
        waiter = nil
    }

    func value() async -> Bool {
        if let result { return result }
        return await withCheckedContinuation { waiter = $0 }
    }
}

/// POSIX signals as an async stream (the default handlers are replaced while it lives).
///
/// The handlers are installed before `init` returns, so a signal that arrives at any moment after is
/// delivered, never lost and never handled by its default action (SIGHUP and SIGTERM would end the
/// process). Each handler writes the signal's number to a pipe (all it may do in a handler), and the
/// pipe's reader hands it to the streams that asked for it.
final class SignalStream: Sendable {
    let stream: AsyncStream<Int32>
    private let subscription: Int?

    init(_ signals: [Int32]) {
        let (stream, continuation) = AsyncStream.makeStream(of: Int32.self, bufferingPolicy: .unbounded)
        self.stream = stream
        subscription = SignalPipe.subscribe(Set(signals), continuation)
    }

    deinit {
        if let subscription { SignalPipe.unsubscribe(subscription) }
    }
}

/// The pipe the signal handlers write to, opened once per process before any handler is installed, and
/// the streams its reader serves.
enum SignalPipe {
    /// The write end, read by the handlers; -1 before the pipe is open.
    nonisolated(unsafe) private static var writeEnd: Int32 = -1

    private struct State {
        var reader: (any DispatchSourceRead)?
        var subscribers: [Int: (signals: Set<Int32>, continuation: AsyncStream<Int32>.Continuation)] = [:]
        var nextID = 0
        var installed: Set<Int32> = []
    }

    private static let state = Mutex(State())

    /// Installs the handlers of `signals` and serves them to `continuation`; nil when no pipe can be opened
    /// (no descriptors left), and then the signals keep their default actions.
    static func subscribe(_ signals: Set<Int32>, _ continuation: AsyncStream<Int32>.Continuation) -> Int? {
        state.withLock { state in
            if state.reader == nil {
                var ends: [Int32] = [-1, -1]
                guard pipe(&ends) == 0 else { return nil }
                for end in ends {
                    _ = fcntl(end, F_SETFD, FD_CLOEXEC)
                    _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK)
                }
                writeEnd = ends[1]
                let readEnd = ends[0]
                let reader = DispatchSource.makeReadSource(fileDescriptor: readEnd, queue: .global())
                reader.setEventHandler { drain(readEnd) }
                reader.resume()
                state.reader = reader
            }
            let id = state.nextID
            state.nextID += 1
            state.subscribers[id] = (signals, continuation)
            for number in signals where state.installed.insert(number).inserted {
                var action = sigaction()
                action.__sigaction_handler.sa_handler = { number in SignalPipe.notify(number) }
                sigemptyset(&action.sa_mask)
                action.sa_flags = SA_RESTART
                sigaction(number, &action, nil)
            }
            return id
        }
    }

    /// Stops serving a stream (its signals stay handled: they are ignored when nobody asks for them).
    static func unsubscribe(_ id: Int) {
        let removed = state.withLock { $0.subscribers.removeValue(forKey: id) }
        removed?.continuation.finish()
    }

    /// Reads every number waiting in the pipe and hands each to the streams that asked for it.
    private static func drain(_ readEnd: Int32) {
        var bytes = [UInt8](repeating: 0, count: 64)
        while true {
            let count = bytes.withUnsafeMutableBytes { Glibc.read(readEnd, $0.baseAddress, $0.count) }
            guard count > 0 else { return }
            let subscribers = state.withLock { Array($0.subscribers.values) }
            for byte in bytes[0..<count] {
                let number = Int32(byte)
                for subscriber in subscribers where subscriber.signals.contains(number) {
                    subscriber.continuation.yield(number)
                }
            }
        }
    }

    /// Writes `number` to the pipe: async-signal-safe (one `write`, errno kept).
    private static func notify(_ number: Int32) {
        let saved = errno
        var byte = UInt8(truncatingIfNeeded: number)
        _ = Glibc.write(writeEnd, &byte, 1)
        errno = saved
    }
}
