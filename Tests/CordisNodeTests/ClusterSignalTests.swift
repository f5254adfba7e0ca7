import CordisNode
import Foundation
import Testing

/// Signals to a real node: SIGTERM stops it in order (its peers' consumers let go before its providers'
/// teardown, then it exits 0); SIGHUP re-reads its entries file, refusing one that does not parse.
@Suite("Cluster: signals")
struct ClusterSignalTests {
    @Test("SIGTERM: peers see the withdrawal before the provider's node exits, with exit code 0")
    func terminateWithdrawsFirst() async throws {
        try await TestCluster.run { cluster in
            let b = try await cluster.start("b", entries: #"[{"id": "clock", "plugin": "clock"}]"#)
            let a = try await cluster.start("a", entries: #"[{"id": "greeter", "plugin": "greeter"}]"#, peers: [b])
            let console = try await cluster.control(a)
            try #require(await a.waitForLine(containing: "hello at"))
            try #require(try await console.awaitFiber(ofEntry: "greeter", inState: "active") != nil)

            b.process.signal(SIGTERM)
            #expect(await b.process.exitCode() == 0)
            // The order, as in ClusterWithdrawalTests: a logs bye, then acknowledges; b logs the
            // acknowledgement, then stops its clock, then exits.
            try #require(await a.waitForLine(containing: "acknowledged the withdrawal of clock on b"))
            let aText = a.process.text, bText = b.process.text
            let bye = try #require(aText.lineIndex(containing: "] greeter: bye"))
            let ack = try #require(aText.lineIndex(containing: "acknowledged the withdrawal of clock on b"))
            #expect(bye < ack)
            let finished = try #require(bText.lineIndex(containing: ClusterWithdrawalTests.acknowledgedByA))
            let stopped = try #require(bText.lineIndex(containing: "clock stopped"))
            #expect(finished < stopped)
            #expect(bText.contains("stopping on signal"))
            #expect(try await console.awaitFiber(ofEntry: "greeter", inState: "pending") != nil)
        }
    }

    @Test("SIGHUP: an edited entries file takes effect (visible on a peer); an unparsable one is refused and the node keeps running")
    func hangupReloads() async throws {
        try await TestCluster.run { cluster in
            let b = try await cluster.start("b", entries: #"[{"id": "clock", "plugin": "clock", "disabled": true}]"#)
            let a = try await cluster.start("a", entries: #"[{"id": "greeter", "plugin": "greeter"}]"#, peers: [b])
            let console = try await cluster.control(a)
            try #require(await a.waitForLine(containing: "linked to b"))
            #expect(try await console.fiber(ofEntry: "greeter")?["state"]?.stringValue == "pending")

            try cluster.folder.write("b.json", #"{"version": 1, "entries": [{"id": "clock", "plugin": "clock"}]}"#)
            b.process.signal(SIGHUP)
            try #require(await b.waitForLine(containing: "reloaded"))
            try #require(await a.waitForLine(containing: "hello at"))
            #expect(try await console.awaitFiber(ofEntry: "greeter", inState: "active")?.provider("clock") == "b")

            try cluster.folder.write("b.json", #"{"version": 1, "entries": [{"id": "clock", "plug"#)
            b.process.signal(SIGHUP)
            try #require(await b.waitForLine(containing: "reload refused"))
            #expect(b.process.process.isRunning)
            let bConsole = try await cluster.control(b)
            #expect(try await bConsole.state(ofEntry: "clock") == "active")
            #expect(try await console.fiber(ofEntry: "greeter")?["state"]?.stringValue == "active")
            #expect(a.process.text.occurrences(of: "hello at") == 1)
        }
    }
}
