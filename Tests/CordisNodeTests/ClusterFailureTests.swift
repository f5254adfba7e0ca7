import CordisNode
import Foundation
import Testing

/// A provider's node dies: consumers elsewhere drop to pending at once (its socket closes; no heartbeat
/// deadline is needed), come back when it restarts, and a call in flight fails with `withdrawn`.
@Suite("Cluster: a provider's node dies")
struct ClusterFailureTests {
    @Test("kill -9 of the provider's node drops the consumer to pending fast; a restart on the same socket brings it back")
    func killAndRestart() async throws {
        try await TestCluster.run { cluster in
            let b = try await cluster.start("b", entries: #"[{"id": "clock", "plugin": "clock"}]"#)
            let a = try await cluster.start("a", entries: #"[{"id": "greeter", "plugin": "greeter"}]"#, peers: [b])
            let console = try await cluster.control(a)
            try #require(await a.waitForLine(containing: "hello at"))
            try #require(try await console.awaitFiber(ofEntry: "greeter", inState: "active") != nil)

            b.process.signal(SIGKILL)
            #expect(await b.process.exitCode() == SIGKILL)
            #expect(b.process.process.terminationReason == .uncaughtSignal)
            // Faster than the heartbeat timeout (3 s): the closed socket is the news.
            let start = ContinuousClock.now
            #expect(try await console.awaitFiber(ofEntry: "greeter", inState: "pending", timeout: .milliseconds(2_500)) != nil)
            #expect(ContinuousClock.now - start < .seconds(3))
            try #require(await a.waitForLine(containing: "link to b lost"))

            // The dead node's socket file is still there; the new life reclaims it.
            let again = try await cluster.restart(b)
            #expect(await again.waitForLine(containing: "removed stale socket file"))
            try #require(await a.waitForOccurrences(of: "hello at", count: 2))
            #expect(try await console.awaitFiber(ofEntry: "greeter", inState: "active")?.provider("clock") == "b")
            #expect(await a.waitForLine(containing: "b restarted"))
        }
    }

    /// Deterministic without sleeping or a test-only plugin: the provider's node is stopped (SIGSTOP, and
    /// the test waits until `/proc` shows every thread stopped), so a call sent to it cannot be answered
    /// (the consumer's node waits 60 s before it counts the silence); the consumer's node logs each call it sends (debug level), the
    /// test waits for that line, then kills the provider (SIGKILL). The call is then certainly in flight,
    /// and must fail at once with `withdrawn`: not after the call timeout (30 s), not as `failed`.
    @Test("A call in flight when the provider's node dies fails with withdrawn; inside apply the consumer goes back to pending")
    func callInFlightWhenTheProviderDies() async throws {
        try await TestCluster.run { cluster in
            let b = try await cluster.start("b", entries: #"[{"id": "clock", "plugin": "clock"}, {"id": "counter", "plugin": "counter"}]"#)
            // b is stopped for as long as the steps below take on a loaded machine: a must not give it up for
            // its silence meanwhile (what ends b here is its death, which closes its socket).
            let a = try await cluster.start(
                "a", entries: #"[{"id": "badge", "plugin": "badge", "disabled": true}]"#, peers: [b],
                extra: ["--log-level", "debug"], timing: ["--heartbeat-interval", "0.2", "--heartbeat-timeout", "60"])
            let console = try await cluster.control(a)
            try #require(await console.awaitStatus("proxies for b's clock and counter") {
                $0.fibers(plugin: "remote:clock").count == 1 && $0.fibers(plugin: "remote:counter").count == 1
            })

            // A console call on a, relayed by a's proxy to b.
            #expect(try await console.request(.call, args: ["service": "clock", "method": "now"]).objectValue?["node"] == "b")
            try #require(await b.process.suspend())
            let call = Task { try await console.request(.call, args: ["service": "clock", "method": "now"]) }
            try #require(await a.waitForOccurrences(of: "calling clock.now on b", count: 2))
            // The badge's apply calls counter.add on b, which cannot answer either.
            let enable = Task { try await console.request(.enable, args: ["entry": "badge"]) }
            try #require(await a.waitForLine(containing: "calling counter.add on b"))
            b.process.signal(SIGKILL)
            let killed = ContinuousClock.now
            let outcome = await call.result
            #expect(ContinuousClock.now - killed < .seconds(10))
            #expect(throws: ControlFailure.self) { try outcome.get() }
            if case .failure(let failure as ControlFailure) = outcome {
                #expect(failure.code == "withdrawn")
            }
            let enabled = try await enable.value
            #expect(enabled.objectValue?["state"]?.stringValue == "pending")
            let badge = try #require(try await console.fiber(ofEntry: "badge"))
            #expect(badge["state"]?.stringValue == "pending")
            #expect(badge["error"]?.isNull == true)
            #expect(!a.process.text.contains("plugin badge failed"))
        }
    }
}
