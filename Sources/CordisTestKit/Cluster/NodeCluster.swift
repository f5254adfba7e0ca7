import Cordis
import Foundation
import Synchronization

/// A cluster of real node processes for one test, each in its own folder under one temporary folder,
/// on Unix sockets or loopback TCP (nothing fixed: safe for tests running in parallel).
///
/// Start one with `NodeCluster.run(_:options:_:)`, which ends every process and removes the folder
/// however the body ends (returned, thrown, cancelled), or with `start(_:options:)` and `shutdown()`
/// (XCTest's `tearDown`). A node also dies with the test process itself, even one killed with SIGKILL
/// (`NodeProcess.parentVariable`). Every wait has a deadline and throws `TestKitError` carrying the end
/// of every node's log. Thread-safe.
public final class NodeCluster: Sendable {
    /// The cluster's folder (each node's is a folder in it, named after the node's position).
    public let folder: URL
    /// The options it was started with.
    public let options: ClusterOptions
    /// The generated secret file (mode 0600), nil on Unix sockets without `secret` and with TLS.
    public let secretFile: String?
    /// The folder of the generated certificates with TLS (`ca.pem`, `node-NAME.pem` and `.key`,
    /// `operator-cordis-test-kit.pem` and `.key`: the kit's console), nil otherwise.
    public let certificates: String?
    let roster: Roster
    let faults = LinkFaults()
    private let etcdServer = Mutex<EtcdServer?>(nil)

    /// The cluster's private etcd in etcd mode (nil in the mesh): its members, its `discovery` setting,
    /// and `kill`/`restart` of a member for tests of a lost etcd.
    public var etcd: EtcdServer? { etcdServer.withLock { $0 } }
    private let directory: TestFolder

    /// The nodes of a cluster and how to tell them apart by process id (read by the relays).
    final class Roster: Sendable {
        let nodes = Mutex<[ClusterNode]>([])
        func name(of pid: pid_t) -> String? {
            let all = nodes.withLock { $0 }
            return all.first(where: { node in node.process.process.processIdentifier == pid })?.name
        }
        func logs(lines: Int = 60) -> [(node: String, text: String)] {
            nodes.withLock { $0 }.map { node in
                (node.name, node.log.split(separator: "\n", omittingEmptySubsequences: false).suffix(lines).joined(separator: "\n"))
            }
        }
    }

    private init(options: ClusterOptions) throws {
        self.options = options
        directory = try TestFolder()
        folder = directory.url
        roster = Roster()
        certificates = options.transport == .tls ? directory.path("certs") : nil
        if options.transport == .tcp || (options.secret && options.transport == .unix) {
            var bytes = [UInt8](repeating: 0, count: 32)
            for index in bytes.indices { bytes[index] = UInt8.random(in: 0...255) }
            let path = directory.path("secret")
            try bytes.map { String(format: "%02x", $0) }.joined().write(toFile: path, atomically: true, encoding: .utf8)
            try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: path)
            secretFile = path
        } else {
            secretFile = nil
        }
    }

    deinit {
        // The last line of defence (a test that neither ran `run` nor `shutdown`): no node outlives it.
        for node in roster.nodes.withLock({ $0 }) { node.abandon() }
        etcdServer.withLock { $0 }?.abandon()
    }

    /// Starts `nodes` in order (in the mesh each dials the ones before it; in etcd mode the kit's etcd is
    /// started first) and waits until each listens.
    ///
    /// - Throws: `TestKitError` `.startFailed` (with the logs) when a node does not start; the nodes
    ///   already started are ended first.
    public static func start(_ nodes: [NodeSpec], options: ClusterOptions = ClusterOptions()) async throws -> NodeCluster {
        let cluster = try NodeCluster(options: options)
        do {
            if options.discovery == .etcd {
                guard EtcdServer.isInstalled else {
                    throw TestKitError(.startFailed, "etcd mode needs etcd at \(EtcdServer.executable.path) (Debian: etcd-server)")
                }
                let etcd = try await EtcdServer(in: cluster.directory)
                cluster.etcdServer.withLock { $0 = etcd }
            }
            if cluster.certificates != nil {
                try await cluster.makeCertificates(["ca"])
                try await cluster.makeCertificates(["operator", ClusterNode.consoleName])
            }
            for spec in nodes { _ = try await cluster.add(spec) }
        } catch {
            await cluster.shutdown()
            throw error
        }
        return cluster
    }

    /// Starts a cluster of `nodes`, runs `body` with it, then ends every node and removes the folder,
    /// whether `body` returned, threw or was cancelled; returns what `body` returned.
    public static func run<T: Sendable>(
        _ nodes: [NodeSpec], options: ClusterOptions = ClusterOptions(), _ body: (NodeCluster) async throws -> T
    ) async throws -> T {
        let cluster = try await start(nodes, options: options)
        do {
            let result = try await body(cluster)
            await cluster.shutdown()
            return result
        } catch {
            await cluster.shutdown()
            throw error
        }
    }

    /// Every node, in the order they were added.
    public var nodes: [ClusterNode] { roster.nodes.withLock { $0 } }

    /// The node named `name`.
    ///
    /// - Throws: `TestKitError` `.invalidArgument` when the cluster has no such node.
    public func node(_ name: String) throws -> ClusterNode {
        guard let node = roster.nodes.withLock({ $0.first(where: { $0.name == name }) }) else {
            throw failure(.invalidArgument, "the cluster has no node named \(name) (it has \(nodes.map(\.name)))")
        }
        return node
    }

    /// Adds a node started like the others (it dials every node already there) and waits until it listens.
    ///
    /// - Throws: `TestKitError` `.invalidArgument` for a name that is taken or not a node name,
    ///   `.startFailed` when it does not start.
    @discardableResult
    public func add(_ spec: NodeSpec) async throws -> ClusterNode {
        guard Self.isNodeName(spec.name) else {
            throw failure(.invalidArgument, "\"\(spec.name)\" is not a node name (1–64 characters of A-Z a-z 0-9 . _ -)")
        }
        let existing = nodes
        guard !existing.contains(where: { $0.name == spec.name }) else {
            throw failure(.invalidArgument, "the cluster already has a node named \(spec.name)")
        }
        let index = existing.count
        let home = folder.appendingPathComponent("n\(index)", isDirectory: true)
        try FileManager.default.createDirectory(at: home, withIntermediateDirectories: true)
        let entriesFile = home.appendingPathComponent("entries.json")
        switch spec.entries {
        case .values(let entries):
            do { try FileEntryStore(url: entriesFile).save(entries) } catch {
                throw failure(.invalidArgument, "cannot write the entries of \(spec.name): \(error)")
            }
        case .json(let text):
            try text.write(to: entriesFile, atomically: true, encoding: .utf8)
        }
        let listen = options.transport == .unix ? "unix:" + folder.appendingPathComponent("n\(index).sock").path : "tcp:127.0.0.1:0"
        var relay: LinkRelay?
        if options.relays {
            let roster = self.roster
            relay = try LinkRelay(
                owner: spec.name, unixPath: options.transport == .unix ? folder.appendingPathComponent("r\(index).sock").path : nil,
                faults: faults, identify: { roster.name(of: $0) })
        }
        var arguments = [
            "--name", spec.name, "--entries", entriesFile.path, "--listen", listen,
            "--heartbeat-interval", String(options.heartbeatInterval), "--heartbeat-timeout", String(options.heartbeatTimeout),
        ]
        if let secretFile { arguments += ["--secret-file", secretFile] }
        if let certificates {
            try await makeCertificates(["node", spec.name])
            arguments += [
                "--tls-cert", "\(certificates)/node-\(spec.name).pem", "--tls-key", "\(certificates)/node-\(spec.name).key",
                "--tls-ca", "\(certificates)/ca.pem",
            ]
        }
        if let relay { arguments += ["--advertise", relay.address] }
        if let etcd {
            arguments += ["--discovery", etcd.discovery]
        } else {
            for peer in existing { arguments += ["--peer", peer.dialAddress] }
        }
        arguments += options.arguments + spec.arguments
        let node = ClusterNode(
            name: spec.name, directory: home, entriesFile: entriesFile, arguments: arguments, environment: spec.environment,
            options: options, secretFile: secretFile, certificates: certificates, roster: roster, relay: relay)
        do {
            try await node.launch()
        } catch {
            relay?.stop()
            throw error
        }
        roster.nodes.withLock { $0.append(node) }
        return node
    }

    /// Cuts the link between nodes `a` and `b`: nothing crosses either way and the connections stay open,
    /// as in a network partition, so each node learns of it from its heartbeats (`heartbeatTimeout`).
    /// Calls in flight between them fail when the link is declared lost. Other links are untouched.
    ///
    /// - Throws: `TestKitError` `.invalidArgument` for an unknown node or a cluster without relays.
    public func cut(_ a: String, _ b: String) throws {
        try checkLink(a, b)
        faults.set(a, b, .cut)
    }

    /// Heals the link between `a` and `b` (cut or delayed): a connection that lived through a cut is
    /// closed, so both nodes see the link lost and dial again, as after a real partition.
    ///
    /// - Throws: `TestKitError` `.invalidArgument` for an unknown node or a cluster without relays.
    public func heal(_ a: String, _ b: String) throws {
        try checkLink(a, b)
        faults.set(a, b, nil)
    }

    /// Delays every chunk of bytes between `a` and `b` by `duration`, both ways (a slow network; the
    /// chunks of one connection keep their order, so one direction's delay also holds the other's).
    ///
    /// - Throws: `TestKitError` `.invalidArgument` for an unknown node, a negative duration or a cluster
    ///   without relays.
    public func delay(_ a: String, _ b: String, by duration: Duration) throws {
        try checkLink(a, b)
        guard duration >= .zero else { throw failure(.invalidArgument, "a delay cannot be negative (\(duration))") }
        faults.set(a, b, duration == .zero ? nil : .delay(duration))
    }

    private func checkLink(_ a: String, _ b: String) throws {
        guard options.relays else {
            throw failure(.invalidArgument, "link faults need the kit's relays (ClusterOptions.relays), which this cluster was started without")
        }
        _ = try node(a)
        _ = try node(b)
        guard a != b else { throw failure(.invalidArgument, "a node has no link to itself (\(a))") }
    }

    /// Waits until every entry fiber on every running node is in `state` (by default `active`).
    ///
    /// - Throws: `TestKitError` `.timeout` with the logs.
    public func awaitAll(_ state: FiberState = .active, within deadline: Duration? = nil) async throws {
        for node in nodes where node.isRunning {
            _ = try await node.awaitStatus("every entry \(state)", within: deadline) { status in
                status.entries.allSatisfy { $0.disabled || $0.state == state.rawValue }
            }
        }
    }

    /// The end of every node's log, for a report.
    public func logs(lines: Int = 60) -> String {
        TestKitError(.timeout, "", logs: roster.logs(lines: lines)).description.split(separator: "\n").dropFirst().joined(separator: "\n")
    }

    /// An error of `code` carrying every node's log.
    public func failure(_ code: TestKitError.Code, _ message: String, underlying: (any Error)? = nil) -> TestKitError {
        TestKitError(code, message, logs: roster.logs(), underlying: underlying)
    }

    /// Ends every node (SIGKILL), closes the kit's links and relays, and removes the folder. Safe to call
    /// more than once.
    public func shutdown() async {
        for node in nodes { await node.end() }
        await etcd?.stop()
        directory.remove()
    }

    /// Cordis's certificate script, found from this source file's place in the Cordis checkout.
    static let certificateScript = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("deploy/make-certs.sh").path

    /// Runs `make-certs.sh CERTIFICATES arguments…`.
    private func makeCertificates(_ arguments: [String]) async throws {
        guard let certificates else { return }
        guard FileManager.default.fileExists(atPath: Self.certificateScript) else {
            throw failure(.startFailed, "TLS needs Cordis's deploy/make-certs.sh, not found at \(Self.certificateScript)")
        }
        let run: (termination: ChildProcess.Termination?, output: String)
        do {
            run = try await ChildProcess.run(
                URL(fileURLWithPath: "/bin/sh"), [Self.certificateScript, certificates] + arguments, deadline: .seconds(60))
        } catch {
            throw failure(.startFailed, "cannot run make-certs.sh \(arguments.joined(separator: " "))", underlying: error)
        }
        guard run.termination?.status == 0, run.termination?.reason == .exit else {
            throw failure(.startFailed, "make-certs.sh \(arguments.joined(separator: " ")) failed (is openssl installed?): \(run.output)")
        }
    }

    static func isNodeName(_ name: String) -> Bool {
        (1...64).contains(name.utf8.count) && name.utf8.allSatisfy { byte in
            (byte >= 65 && byte <= 90) || (byte >= 97 && byte <= 122) || (byte >= 48 && byte <= 57) || byte == 46 || byte == 95 || byte == 45
        }
    }
}
