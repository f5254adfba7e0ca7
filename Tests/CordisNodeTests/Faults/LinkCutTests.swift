import CordisNode
import Foundation
import Testing

/// A link cut by a relay the test controls (every byte between a and b passes through it: each node
/// advertises the relay's address, not its own), while a withdrawal is in progress: the withdrawal ends
/// in cordis's order or at its deadline, no proxy is left behind, and the nodes link again afterwards.
@Suite("Faults: a link cut during a withdrawal", .faultTurns)
struct LinkCutTests {
    @Test("The link is cut just after the withdraw reaches the consumer: the withdrawal still ends, no proxy stays, the nodes relink")
    func cutDuringWithdrawal() async throws {
        try await TestCluster.run { cluster in
            let folder = cluster.folder
            let relay = try LoopbackRelay(routes: [
                (folder.path("rb.sock"), folder.path("b.sock")), (folder.path("ra.sock"), folder.path("a.sock")),
            ])
            defer { relay.stop() }
            let b = try await cluster.start(
                "b", entries: #"[{"id": "clock", "plugin": "clock"}]"#, extra: ["--advertise", "unix:\(folder.path("rb.sock"))"])
            let a = try await cluster.start(
                "a", entries: #"[{"id": "greeter", "plugin": "greeter"}]"#,
                extra: ["--advertise", "unix:\(folder.path("ra.sock"))", "--peer", "unix:\(folder.path("rb.sock"))"])
            let aConsole = try await cluster.control(a)
            let bConsole = try await cluster.control(b)
            try #require(try await aConsole.awaitFiber(ofEntry: "greeter", inState: "active") != nil)
            #expect(relay.forwarded > 0, "the link does not go through the relay")

            relay.cut(after: #""type":"withdraw""#)
            let started = ContinuousClock.now
            let disabled = try await bConsole.request(.disable, args: ["entry": "clock"], timeout: .seconds(20))
            let took = ContinuousClock.now - started
            #expect(disabled.objectValue?["disabled"]?.boolValue == true)
            // Ended by the lost link (heartbeat timeout 3 s) or the withdrawal deadline (5 s), not later.
            #expect(took < .seconds(8), "the withdrawal took \(took)")
            #expect(await b.waitForLine(containing: "clock stopped"))
            let bText = b.process.text
            print("link cut: disable took \(took); b: \(bText.lines(containing: "withdrawal of clock"))")
            #expect(bText.contains("withdrawal of clock finished") || bText.contains("withdrawal of clock went ahead"), "\(bText)")
            // a got the withdraw before the cut: its consumer let go, and it holds no proxy.
            #expect(await a.waitForLine(containing: "] greeter: bye"))
            #expect(try await aConsole.awaitStatus("no proxy of b's clock") { $0.fibers(plugin: "remote:clock").isEmpty })
            #expect(try await aConsole.awaitFiber(ofEntry: "greeter", inState: "pending") != nil)

            // The partition ends: the nodes link again, still with no proxy, and the clock comes back on enable.
            try #require(await a.waitForLine(containing: "link to b lost"))
            relay.restore()
            try #require(await a.waitForOccurrences(of: "linked to b", count: 2, timeout: .seconds(20)))
            #expect(try await aConsole.nodeStatus().fibers(plugin: "remote:clock").isEmpty)
            _ = try await bConsole.request(.enable, args: ["entry": "clock"])
            #expect(try await aConsole.awaitFiber(ofEntry: "greeter", inState: "active")?.provider("clock") == "b")
            #expect(try await aConsole.nodeStatus().fibers(plugin: "remote:clock").count == 1)
        }
    }
}
