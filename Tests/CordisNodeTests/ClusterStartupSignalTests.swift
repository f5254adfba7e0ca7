import CordisNode
import Foundation
import Testing

/// Signals that arrive while a node is still starting are handled like later ones, never by their
/// default action (which would end the process).
@Suite("Cluster: signals during start-up")
struct ClusterStartupSignalTests {
    /// An entries file big enough that loading it takes a while, so the signal lands during start-up.
    static func manyCounters(_ count: Int) -> String {
        "[" + (0..<count).map { #"{"id": "c\#($0)", "plugin": "counter", "isolate": {"counter": true}}"# }
            .joined(separator: ",") + "]"
    }

    @Test("SIGHUP during start-up is handled once the node is up: it reloads and keeps running")
    func hangupDuringStartup() async throws {
        try await TestCluster.run { cluster in
            try cluster.folder.write("a.json", #"{"version": 1, "entries": \#(Self.manyCounters(1000))}"#)
            // The warning about --insecure is logged after the signal handlers are installed and before
            // the Loader starts: the signal arrives while the entries are loading.
            let node = try cluster.spawn("a", arguments: [
                "--name", "a", "--entries", cluster.folder.path("a.json"), "--listen", "tcp:127.0.0.1:0", "--insecure",
            ])
            try #require(await node.waitForLine(containing: "without authentication"))
            node.signal(SIGHUP)
            try #require(await node.waitForLine(containing: "listening on"), "\(node.text)")
            try #require(await node.waitForLine(containing: "reloaded"), "\(node.text)")
            #expect(node.process.isRunning)
            node.signal(SIGTERM)
            #expect(await node.exitCode() == 0)
        }
    }

    @Test("SIGTERM during start-up stops the node in order once it is up, with exit code 0")
    func terminateDuringStartup() async throws {
        try await TestCluster.run { cluster in
            try cluster.folder.write("a.json", #"{"version": 1, "entries": \#(Self.manyCounters(1000))}"#)
            let node = try cluster.spawn("a", arguments: [
                "--name", "a", "--entries", cluster.folder.path("a.json"), "--listen", "tcp:127.0.0.1:0", "--insecure",
            ])
            try #require(await node.waitForLine(containing: "without authentication"))
            node.signal(SIGTERM)
            #expect(await node.exitCode() == 0, "\(node.text)")
            #expect(node.text.contains("stopping on signal"))
        }
    }
}
