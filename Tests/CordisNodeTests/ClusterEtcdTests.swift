import CordisProcessTesting
import Foundation
import Testing

/// Real `cordis-node`s in etcd mode against a real etcd the test starts (free loopback ports, its own
/// data folder; only its own processes are ended).
@Suite("Cluster: membership and services through etcd", .enabled(if: EtcdServer.isInstalled), .serialized)
struct ClusterEtcdTests {
    static let clock = #"[{"id": "clock", "plugin": "clock"}]"#
    static let greeter = #"[{"id": "greeter", "plugin": "greeter"}]"#

    /// Runs `body` with a test cluster and an etcd of `members` members in its folder.
    static func run(members: Int = 1, _ body: (TestCluster, EtcdServer) async throws -> Void) async throws {
        try await TestCluster.run { cluster in
            let etcd = try await EtcdServer(in: cluster.folder, members: members)
            do {
                try await body(cluster, etcd)
            } catch {
                await etcd.stop()
                throw error
            }
            await etcd.stop()
        }
    }

    static func discovery(_ etcd: EtcdServer, _ extra: [String] = []) -> [String] {
        ["--discovery", etcd.discovery, "--lease-ttl", "2"] + extra
    }

    @Test("three nodes find each other through etcd with no --peer; a's greeter uses b's clock over the one link it needs")
    func findEachOther() async throws {
        try await Self.run { cluster, etcd in
            let b = try await cluster.start("b", entries: Self.clock, extra: Self.discovery(etcd))
            let c = try await cluster.start("c", entries: #"[{"id": "counter", "plugin": "counter"}]"#, extra: Self.discovery(etcd))
            let a = try await cluster.start("a", entries: Self.greeter, extra: Self.discovery(etcd))
            let console = try await cluster.control(a)
            #expect(try await console.awaitFiber(ofEntry: "greeter", inState: "active")?.provider("clock") == "b")
            #expect(await a.waitForLine(containing: "from b"))
            // c's counter is known (a proxy) but never called: no link to c.
            #expect(try await console.awaitStatus("a proxy of c's counter") { $0.fibers(plugin: "remote:counter").count == 1 })
            let members = try await console.request(.members)
            let list = members["members"]?.arrayValue?.compactMap(\.objectValue) ?? []
            #expect(list.map { $0["name"]?.stringValue ?? "" }.sorted() == ["a", "b", "c"])
            let linked = list.filter { $0["linked"]?.boolValue == true }.compactMap { $0["name"]?.stringValue }.sorted()
            #expect(linked == ["a", "b"])
            // c is registered and healthy without a link: reachable, not called unreachable.
            #expect(list.allSatisfy { $0["reachable"]?.boolValue == true && $0["health"]?.stringValue == "up" }, "\(list)")
            // The console sees the whole cluster as in the mesh: a relays, opening the links it needs.
            let status = try await console.request(.status, args: ["cluster": true])
            let nodes = status["nodes"]?.arrayValue?.compactMap(\.objectValue) ?? []
            #expect(nodes.map { $0["name"]?.stringValue ?? "" } == ["a", "b", "c"])
            #expect(nodes.allSatisfy { $0["reachable"]?.boolValue == true })
            _ = b
            // c crashes: once its lease is gone it is still listed, down (nobody heard it leave).
            c.process.signal(SIGKILL)
            let expected = ["a": "up", "b": "up", "c": "down"]
            #expect(try await ClusterMemberHealthTests.awaitHealth(console, expected) == expected)
        }
    }

    @Test("an idle link closes in order: the consumer stays active, and the next call opens a new link")
    func idleLinkCloses() async throws {
        try await Self.run { cluster, etcd in
            let idle = ["--idle-link-timeout", "1"]
            _ = try await cluster.start("b", entries: Self.clock, extra: Self.discovery(etcd, idle))
            let a = try await cluster.start(
                "a", entries: Self.greeter, extra: Self.discovery(etcd, idle + ["--log-level", "debug"]))
            let console = try await cluster.control(a)
            #expect(try await console.awaitFiber(ofEntry: "greeter", inState: "active")?.provider("clock") == "b")
            // Either side may close it first; a sees an idle close either way, not a lost link.
            #expect(await a.waitForLine(containing: "idle link to b closed", timeout: .seconds(10)))
            #expect(!a.process.text.contains("link to b lost"), "\(etcd.logs())")
            #expect(try await console.fiber(ofEntry: "greeter")?["state"]?.stringValue == "active")
            let answer = try await console.request(.call, args: ["service": "clock", "method": "now"])
            #expect(answer.objectValue?["node"]?.stringValue == "b")
            #expect(a.process.text.occurrences(of: "linked to b") == 2)
        }
    }

    @Test("a second node named b is refused at start with exit 69 while the first one's lease lives")
    func secondNameRefused() async throws {
        try await Self.run { cluster, etcd in
            _ = try await cluster.start("b", entries: Self.clock, extra: Self.discovery(etcd))
            try cluster.folder.write("b2.json", #"{"version": 1, "entries": []}"#)
            let second = try cluster.spawn("b2", arguments: [
                "--name", "b", "--entries", cluster.folder.path("b2.json"), "--listen", "unix:\(cluster.folder.path("b2.sock"))",
            ] + Self.discovery(etcd))
            #expect(await second.exitCode() == 69)
            #expect(second.text.contains("the name b is registered in etcd by a live member"))
        }
    }

    @Test("disabling b's clock drops a's greeter to pending; enabling it brings it back")
    func disableOnB() async throws {
        try await Self.run { cluster, etcd in
            let b = try await cluster.start("b", entries: Self.clock, extra: Self.discovery(etcd))
            let a = try await cluster.start("a", entries: Self.greeter, extra: Self.discovery(etcd))
            let console = try await cluster.control(a)
            let bConsole = try await cluster.control(b)
            #expect(try await console.awaitFiber(ofEntry: "greeter", inState: "active")?.provider("clock") == "b")
            _ = try await bConsole.request(.disable, args: ["entry": "clock"])
            #expect(try await console.awaitFiber(ofEntry: "greeter", inState: "pending", timeout: .seconds(5)) != nil)
            // Relayed by a to b, as in the mesh.
            _ = try await console.request(.enable, node: "b", args: ["entry": "clock"])
            #expect(try await console.awaitFiber(ofEntry: "greeter", inState: "active")?.provider("clock") == "b")
        }
    }

    @Test("SIGKILL of b drops a's greeter to pending at once (its link closes)")
    func killB() async throws {
        try await Self.run { cluster, etcd in
            let b = try await cluster.start("b", entries: Self.clock, extra: Self.discovery(etcd))
            let a = try await cluster.start("a", entries: Self.greeter, extra: Self.discovery(etcd))
            let console = try await cluster.control(a)
            #expect(try await console.awaitFiber(ofEntry: "greeter", inState: "active")?.provider("clock") == "b")
            b.process.signal(SIGKILL)
            let start = ContinuousClock.now
            #expect(try await console.awaitFiber(ofEntry: "greeter", inState: "pending", timeout: .seconds(3)) != nil)
            #expect(ContinuousClock.now - start < .seconds(3))
        }
    }

    /// Starts `name` with a heartbeat timeout of 30 s, so only the lease can declare it (or its peer) gone.
    static func slowHeartbeats(_ name: String, _ entries: String, in cluster: TestCluster, _ etcd: EtcdServer) async throws -> ClusterMember {
        try cluster.folder.write("\(name).json", "{\"version\": 1, \"entries\": \(entries)}")
        return try await cluster.launch(name, arguments: [
            "--name", name, "--entries", cluster.folder.path("\(name).json"), "--listen", "unix:\(cluster.folder.path("\(name).sock"))",
            "--heartbeat-interval", "0.2", "--heartbeat-timeout", "30",
        ] + discovery(etcd))
    }

    @Test("SIGSTOP of b drops a's greeter to pending within the lease TTL, long before a heartbeat timeout")
    func stopB() async throws {
        try await Self.run { cluster, etcd in
            let b = try await Self.slowHeartbeats("b", Self.clock, in: cluster, etcd)
            let a = try await Self.slowHeartbeats("a", Self.greeter, in: cluster, etcd)
            let console = try await cluster.control(a)
            #expect(try await console.awaitFiber(ofEntry: "greeter", inState: "active")?.provider("clock") == "b")
            try #require(await b.process.suspend())
            let start = ContinuousClock.now
            #expect(try await console.awaitFiber(ofEntry: "greeter", inState: "pending", timeout: .seconds(8)) != nil)
            // The lease (2 s) ends b's life, with a second and a half of slack; the heartbeat timeout is 30 s.
            #expect(ContinuousClock.now - start < .milliseconds(3_500))
            // Resumed, b finds its lease gone and registers again as a new incarnation; a uses it.
            b.process.signal(SIGCONT)
            #expect(await b.waitForLine(containing: "registered in etcd again as a new incarnation", timeout: .seconds(10)))
            #expect(try await console.awaitFiber(ofEntry: "greeter", inState: "active")?.provider("clock") == "b")
        }
    }

    @Test("etcd killed past the lease TTL: links serve while the lease may live, then b withdraws its clock from a and shares it again once registered")
    func etcdRestart() async throws {
        try await Self.run { cluster, etcd in
            let b = try await cluster.start("b", entries: Self.clock, extra: Self.discovery(etcd))
            let a = try await cluster.start("a", entries: Self.greeter, extra: Self.discovery(etcd))
            let console = try await cluster.control(a)
            #expect(try await console.awaitFiber(ofEntry: "greeter", inState: "active")?.provider("clock") == "b")
            await etcd.kill("e0")
            let killed = ContinuousClock.now
            // etcd merely does not answer and the lease (2 s) may still live: the existing link serves.
            let answer = try await console.request(.call, args: ["service": "clock", "method": "now"])
            #expect(answer.objectValue?["node"]?.stringValue == "b")
            #expect(try await console.fiber(ofEntry: "greeter")?["state"]?.stringValue == "active")
            // Past the TTL the lease has certainly expired: b withdraws its clock from a, in order.
            #expect(await b.waitForLine(containing: "withdrawing this node's services", timeout: .seconds(10)))
            // Not before a TTL after the last answered keepalive (at most a third of the TTL before the kill).
            #expect(ContinuousClock.now - killed > .milliseconds(1_300))
            #expect(try await console.awaitFiber(ofEntry: "greeter", inState: "pending", timeout: .seconds(10)) != nil)
            #expect(await a.waitForLine(containing: "degraded:", timeout: .seconds(10)))
            #expect(await b.waitForLine(containing: "degraded:", timeout: .seconds(10)))
            #expect(try await console.awaitStatus("a degraded") { $0["degraded"]?.stringValue != nil })
            try await etcd.restart("e0")
            #expect(await a.waitForLine(containing: "no longer degraded", timeout: .seconds(15)))
            #expect(await b.waitForLine(containing: "no longer degraded", timeout: .seconds(15)))
            #expect(try await console.awaitStatus("a no longer degraded") { $0["degraded"] == nil })
            // b announces and publishes its clock again: a's greeter uses it.
            #expect(try await console.awaitFiber(ofEntry: "greeter", inState: "active", timeout: .seconds(15))?.provider("clock") == "b")
            // A node started now finds b's clock through etcd.
            let c = try await cluster.start("c", entries: Self.greeter, extra: Self.discovery(etcd))
            let cConsole = try await cluster.control(c)
            #expect(try await cConsole.awaitFiber(ofEntry: "greeter", inState: "active")?.provider("clock") == "b")
        }
    }

    @Test("a three-member etcd with its leader killed keeps the cluster working")
    func leaderKilled() async throws {
        try await Self.run(members: 3) { cluster, etcd in
            _ = try await cluster.start("b", entries: Self.clock, extra: Self.discovery(etcd))
            let a = try await cluster.start("a", entries: Self.greeter, extra: Self.discovery(etcd))
            let console = try await cluster.control(a)
            #expect(try await console.awaitFiber(ofEntry: "greeter", inState: "active")?.provider("clock") == "b")
            let leader = try #require(await etcd.leader())
            await etcd.kill(leader)
            // A node started after the election finds b's clock; a's greeter never dropped.
            let c = try await cluster.start("c", entries: Self.greeter, extra: Self.discovery(etcd))
            let cConsole = try await cluster.control(c)
            #expect(try await cConsole.awaitFiber(ofEntry: "greeter", inState: "active")?.provider("clock") == "b")
            #expect(try await console.fiber(ofEntry: "greeter")?["state"]?.stringValue == "active")
            #expect(!a.process.text.contains("link to b lost"), "\(etcd.logs())")
        }
    }
}
