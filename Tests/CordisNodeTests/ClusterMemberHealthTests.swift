import CordisControl
import CordisJSON
import CordisProcessTesting
import Foundation
import Testing

/// One model of a member's health, in both modes: a member stopped in order is `stopped`, one killed is
/// `down` (never dropped as if it had left), and `members`, the cluster's `status --json` and the
/// `cordis_members` metric say the same.
@Suite("Cluster: a stopped member is stopped, a crashed one down, in the mesh and in etcd mode", .serialized)
struct ClusterMemberHealthTests {
    static let empty = "[]"

    /// The health of every member `console`'s node lists, by name.
    static func health(_ console: ControlClient) async throws -> [String: String] {
        let list = try await console.request(.members)["members"]?.arrayValue ?? []
        var health: [String: String] = [:]
        for member in list {
            if let name = member["name"]?.stringValue { health[name] = member["health"]?.stringValue ?? "?" }
        }
        return health
    }

    /// Asks `members` until the health of the members is `expected`, each request awaiting the previous
    /// answer (no sleeping), for at most `timeout`; the last reading.
    static func awaitHealth(
        _ console: ControlClient, _ expected: [String: String], timeout: Duration = .seconds(30)
    ) async throws -> [String: String] {
        let deadline = ContinuousClock.now + timeout
        var last: [String: String] = [:]
        var requests = 0
        while ContinuousClock.now < deadline, requests < ControlClient.maxPollRequests {
            requests += 1
            last = try await health(console)
            if last == expected { return last }
        }
        return last
    }

    /// The `health` each node of the cluster's status carries, by name.
    static func statusHealth(_ console: ControlClient) async throws -> [String: String] {
        let status = try await console.request(.status, args: ["cluster": true])
        var health: [String: String] = [:]
        for node in status["nodes"]?.arrayValue ?? [] {
            if let name = node["name"]?.stringValue { health[name] = node["health"]?.stringValue ?? "?" }
        }
        return health
    }

    @Test("mesh: a member stopped with SIGTERM is stopped, one killed is down, in members and the cluster's status")
    func meshStoppedAndDown() async throws {
        try await TestCluster.run { cluster in
            let a = try await cluster.start("a", entries: Self.empty)
            let b = try await cluster.start("b", entries: Self.empty, peers: [a])
            let c = try await cluster.start("c", entries: Self.empty, peers: [a])
            #expect(await a.waitForLine(containing: "linked to b"))
            #expect(await a.waitForLine(containing: "linked to c"))
            let console = try await cluster.control(a)
            #expect(try await Self.awaitHealth(console, ["a": "up", "b": "up", "c": "up"]) == ["a": "up", "b": "up", "c": "up"])
            b.process.signal(SIGTERM)
            #expect(await b.process.exitCode() == 0)
            c.process.signal(SIGKILL)
            let expected = ["a": "up", "b": "stopped", "c": "down"]
            #expect(try await Self.awaitHealth(console, expected) == expected)
            #expect(try await Self.statusHealth(console) == expected)
        }
    }

    @Test("etcd mode: a member killed stays listed as down once its lease expired, one stopped with SIGTERM is stopped, and the metric counts them")
    func etcdStoppedAndDown() async throws {
        guard EtcdServer.isInstalled else { return }
        try await ClusterEtcdTests.run { cluster, etcd in
            let discovery = ClusterEtcdTests.discovery(etcd)
            let b = try await cluster.start("b", entries: Self.empty, extra: discovery)
            let c = try await cluster.start("c", entries: Self.empty, extra: discovery)
            let a = try await cluster.start(
                "a", entries: Self.empty, extra: discovery + ["--metrics-listen", "tcp:127.0.0.1:0"])
            let console = try await cluster.control(a)
            #expect(try await Self.awaitHealth(console, ["a": "up", "b": "up", "c": "up"]) == ["a": "up", "b": "up", "c": "up"])
            b.process.signal(SIGTERM)
            #expect(await b.process.exitCode() == 0)
            c.process.signal(SIGKILL)
            // c's lease (2 s) expires and etcd drops its key: c stays listed, down, not gone.
            let expected = ["a": "up", "b": "stopped", "c": "down"]
            #expect(try await Self.awaitHealth(console, expected) == expected)
            #expect(try await Self.statusHealth(console) == expected)
            let prefix = "metrics on http://127.0.0.1:"
            let line = a.process.text.split(separator: "\n").first { $0.hasPrefix(prefix) } ?? ""
            let port = UInt16(line.dropFirst(prefix.count).prefix { $0.isNumber }) ?? 0
            let scrape = await RawHTTP.get(port: port, "/metrics")?.body ?? ""
            for (health, count) in [("up", 1), ("stopped", 1), ("down", 1), ("suspected", 0), ("left", 0)] {
                #expect(scrape.contains("cordis_members{health=\"\(health)\"} \(count)\n"), "\(health): \(scrape)")
            }
        }
    }
}
