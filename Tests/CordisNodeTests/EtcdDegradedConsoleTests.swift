import CordisJSON
import CordisProcessTesting
import Foundation
import Testing

/// A node whose etcd lease is lost: plain `status` says degraded and exits 3, and its events say
/// degraded, then recovered.
@Suite("Cluster: a degraded node as the console shows it", .enabled(if: EtcdServer.isInstalled), .serialized)
struct EtcdDegradedConsoleTests {
    @Test("during an etcd outage plain status shows degraded and exits 3; events carry member degraded and recovered")
    func degradedInStatusAndEvents() async throws {
        try await ClusterEtcdTests.run { cluster, etcd in
            let a = try await cluster.start("a", entries: ClusterEtcdTests.clock, extra: ClusterEtcdTests.discovery(etcd))
            func console(_ words: [String]) async throws -> (Int32?, String) {
                let (ended, output) = try await ChildProcess.run(
                    ConsoleFaultTests.consoleExecutable, ["--node", a.address] + words, directory: cluster.folder.url,
                    deadline: .seconds(30))
                return (ended?.status, output)
            }
            let healthy = try await console(["status"])
            #expect(healthy.0 == 0, "\(healthy.1)")
            await etcd.kill("e0")
            #expect(await a.waitForLine(containing: "degraded:", timeout: .seconds(15)))
            let degraded = try await console(["status"])
            #expect(degraded.0 == 3, "\(degraded.1)")
            #expect(degraded.1.split(separator: "\n").first?.contains(" degraded (") == true, "\(degraded.1)")
            try await etcd.restart("e0")
            #expect(await a.waitForLine(containing: "no longer degraded", timeout: .seconds(15)))
            let client = try await cluster.control(a)
            let clock = ContinuousClock()
            let end = clock.now + .seconds(15)
            var changes: [String] = []
            while clock.now < end {
                let events = try await client.request(.subscribe, args: ["history": true, "cluster": false])["events"]?.arrayValue ?? []
                changes = events.filter { $0["kind"] == "member" && $0["detail"]?["member"] == "a" }
                    .compactMap { $0["detail"]?["change"]?.stringValue }
                if changes.contains("recovered") { break }
            }
            #expect(changes.suffix(2) == ["degraded", "recovered"], "\(changes)")
        }
    }
}
