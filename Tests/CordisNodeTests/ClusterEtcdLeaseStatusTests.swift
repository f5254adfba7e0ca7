import CordisProcessTesting
import Foundation
import Testing

/// A node in etcd mode reports the lease it holds in its status, as etcd lists it.
@Suite("Cluster: the etcd lease in status", .enabled(if: EtcdServer.isInstalled), .serialized)
struct ClusterEtcdLeaseStatusTests {
    @Test("status carries b's lease id (as etcdctl lease list shows it) and its time to live")
    func leaseInStatus() async throws {
        try await ClusterEtcdTests.run { cluster, etcd in
            let b = try await cluster.start("b", entries: ClusterEtcdTests.clock, extra: ClusterEtcdTests.discovery(etcd))
            let console = try await cluster.control(b)
            let node = try await console.request(.status)["nodes"]?.arrayValue?.first
            let lease = try #require(node?["lease"], "\(String(describing: node))")
            let id = try #require(lease["id"]?.stringValue)
            #expect(id.count == 16 && id.allSatisfy(\.isHexDigit), "\(id)")
            #expect(lease["ttl"]?.doubleValue == 2)
            let listed = await etcd.control(["lease", "list"]) ?? ""
            #expect(listed.contains(id.drop { $0 == "0" }), "\(listed)")
        }
    }
}
