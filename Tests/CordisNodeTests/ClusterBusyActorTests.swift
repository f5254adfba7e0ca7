import CordisNode
import CordisProcessTesting
import Foundation
import Testing

/// Heartbeats are answered on the event loop, not on `CordisActor`: a plugin that keeps the actor busy
/// longer than the heartbeat timeout does not get its node declared down by its peers.
@Suite("Cluster: a node whose CordisActor is busy stays up")
struct ClusterBusyActorTests {
    /// Both members beat every 0.2 s and give up after 2 s of silence; a's `busy` plugin blocks a's
    /// `CordisActor` for 3 s. If a's heartbeats depended on the actor, b would declare a down after 2 s.
    @Test("A plugin blocking CordisActor for 3 s with a 2 s heartbeat timeout does not get its node declared down")
    func busyActorKeepsTheLink() async throws {
        try await TestCluster.run { cluster in
            let timing = ["--heartbeat-interval", "0.2", "--heartbeat-timeout", "2"]
            try cluster.folder.write("b.json", #"{"version": 1, "entries": [{"id": "clock", "plugin": "clock"}]}"#)
            let b = try await ClusterMember.launch(
                "b", folder: cluster.folder,
                arguments: ["--name", "b", "--entries", cluster.folder.path("b.json"), "--listen", "unix:\(cluster.folder.path("b.sock"))"] + timing,
                executable: NodeProcess.testNodeExecutable)
            cluster.track(b)
            try cluster.folder.write("a.json", #"""
                {"version": 1, "entries": [
                  {"id": "greeter", "plugin": "greeter"},
                  {"id": "busy", "plugin": "busy", "config": {"seconds": 3}, "disabled": true}]}
                """#)
            let a = try await ClusterMember.launch(
                "a", folder: cluster.folder,
                arguments: ["--name", "a", "--entries", cluster.folder.path("a.json"), "--listen", "unix:\(cluster.folder.path("a.sock"))",
                            "--peer", b.address] + timing,
                executable: NodeProcess.testNodeExecutable)
            cluster.track(a)
            let console = try await cluster.control(b)
            try #require(try await console.awaitFiber(ofEntry: "clock", inState: "active") != nil)
            try #require(await a.waitForLine(containing: "hello at"))

            // The console's request is served on a's actor too: sent without waiting for the answer.
            let consoleOfA = try await cluster.control(a)
            let enable = Task { try await consoleOfA.request("enable", args: ["entry": "busy"], timeout: .seconds(30)) }
            try #require(await a.waitForLine(containing: "busy: blocking"))
            try #require(await a.waitForLine(containing: "busy: done", timeout: .seconds(20)))
            _ = try? await enable.value

            // After the 3 s block: neither side gave the other up, and b still lists a as reachable.
            #expect(!b.process.text.contains("no heartbeat from a"))
            #expect(!a.process.text.contains("no heartbeat from b"))
            #expect(!b.process.text.contains("link to a lost"))
            let members = try await console.request("members")
            let memberA = members["members"]?.arrayValue?.first { $0["name"]?.stringValue == "a" }
            #expect(memberA?["reachable"]?.boolValue == true)
        }
    }
}
