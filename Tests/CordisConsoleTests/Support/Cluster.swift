import CordisProcessTesting
import Foundation
import Testing

/// Real `cordis-node` processes for one test, in a temporary folder, on short Unix socket paths.
final class Cluster: Sendable {
    let folder: TestFolder
    private let started = Mutex<[NodeProcess]>([])

    init() throws { folder = try TestFolder() }

    /// The socket address of node `name`.
    func address(_ name: String) -> String { "unix:" + folder.path("\(name).sock") }

    /// The entries file of node `name`.
    func entries(_ name: String) -> String { folder.path("\(name).json") }

    /// Starts node `name` with `entries` (JSON text), linked to `peers`, and waits until it listens. Its
    /// heartbeat timeout is 1 s unless `heartbeatTimeout` says otherwise.
    @discardableResult
    func start(
        _ name: String, entries: String, peers: [String] = [], extra: [String] = [], heartbeatTimeout: Int = 1
    ) async throws -> NodeProcess {
        try folder.write("\(name).json", entries)
        var arguments = ["--name", name, "--entries", self.entries(name), "--listen", address(name),
                         "--heartbeat-interval", "0.2", "--heartbeat-timeout", String(heartbeatTimeout)]
        for peer in peers { arguments += ["--peer", address(peer)] }
        let node = try NodeProcess(name: name, arguments: arguments + extra, directory: folder.url)
        started.withLock { $0.append(node) }
        #expect(await node.waitForLine(containing: "listening on"))
        return node
    }

    /// The console pointed at node `name`.
    func console(_ name: String, _ arguments: [String], timeout: Double = 5) async throws -> ConsoleResult {
        try await runConsole(["--node", address(name), "--timeout", String(timeout)] + arguments)
    }

    /// A console pointed at node `name` that runs until it is stopped (`events --follow`, `watch`); the
    /// caller stops it.
    func follow(_ name: String, _ arguments: [String]) throws -> NodeProcess {
        try NodeProcess(
            name: "events", arguments: ["--node", address(name)] + arguments, directory: folder.url,
            executable: NodeProcess.productsDirectory.appendingPathComponent("cordis-console"))
    }

    /// Kills every node this test started and removes the folder.
    func stop() async {
        for node in started.withLock({ $0 }) { await node.stop() }
        folder.remove()
    }
}

import Synchronization
