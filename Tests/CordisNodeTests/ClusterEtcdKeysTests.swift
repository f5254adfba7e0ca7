import CordisProcessTesting
import Foundation
import Testing

/// The service keys of a real `cordis-node` in etcd mode, against a real etcd that goes away for a while.
@Suite("Cluster: service keys in etcd", .enabled(if: EtcdServer.isInstalled), .serialized)
struct ClusterEtcdKeysTests {
    @Test("a service key whose delete etcd did not answer is deleted once etcd is back, with the lease kept")
    func failedDeleteGoesAgain() async throws {
        try await ClusterEtcdTests.run { cluster, etcd in
            // A lease long enough to outlive etcd's restart: only the delete is in question.
            let b = try await cluster.start("b", entries: ClusterEtcdTests.clock, extra: [
                "--discovery", etcd.discovery, "--lease-ttl", "20",
            ])
            let prefix = "cordis/services/b/"
            let keys = { await etcd.control(["get", "--prefix", prefix, "--keys-only"])?.split(separator: "\n").filter { !$0.isEmpty } }
            let clock = ContinuousClock()
            var listed = await keys() ?? []
            let published = clock.now + .seconds(20)
            while listed.isEmpty, clock.now < published { listed = await keys() ?? [] }
            try #require(listed.count == 1, "b's clock was never published: \(etcd.logs())")
            // etcd is gone (its port refuses connections, so no request can reach it and run later): the
            // clock leaves b, and the delete of its key fails.
            await etcd.kill("e0")
            let console = try await cluster.control(b)
            _ = try await console.request(.disable, args: ["entry": "clock"])
            let failed = await b.waitForLine(containing: "cannot delete \(listed[0]) from etcd, trying again", timeout: .seconds(20))
            try await etcd.restart("e0")
            #expect(failed, "\(b.process.text.suffix(2000))")
            var left = listed
            let deleted = clock.now + .seconds(40)
            while !left.isEmpty, clock.now < deleted { left = await keys() ?? listed }
            #expect(left.isEmpty, "b's key is still in etcd: \(left)\n\(b.process.text.suffix(2000))")
            #expect(!b.process.text.contains("degraded"), "\(b.process.text.suffix(2000))")
        }
    }
}
