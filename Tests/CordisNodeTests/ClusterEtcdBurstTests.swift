@testable import CordisDiscovery
import CordisJSON
import CordisProcessTesting
import CordisWire
import Foundation
import Testing

/// Someone with write access to etcd inserts, then deletes, thousands of members and services: the
/// nodes' lease renewals still land (they keep their lives), the log stays short, and consumers end up
/// bound to the real provider.
@Suite("Cluster: a burst of etcd keys", .enabled(if: EtcdServer.isInstalled), .serialized)
struct ClusterEtcdBurstTests {
    static let count = ProcessInfo.processInfo.environment["CORDIS_LONG_TESTS"] == "1" ? 5_000 : 2_000

    /// Runs `body` on `keys`, 16 at a time.
    static func each(_ keys: [String], _ body: @escaping @Sendable (String) async throws -> Void) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            var next = 0
            for _ in 0..<16 where next < keys.count {
                let key = keys[next]
                next += 1
                group.addTask { try await body(key) }
            }
            while try await group.next() != nil, next < keys.count {
                let key = keys[next]
                next += 1
                group.addTask { try await body(key) }
            }
            try await group.waitForAll()
        }
    }

    @Test("thousands of fake members and services put, then deleted: no node loses its lease, and a's greeter is bound to b after")
    func burstKeepsLeases() async throws {
        try await ClusterEtcdTests.run { cluster, etcd in
            let b = try await cluster.start("b", entries: ClusterEtcdTests.clock, extra: ClusterEtcdTests.discovery(etcd))
            let a = try await cluster.start("a", entries: ClusterEtcdTests.greeter, extra: ClusterEtcdTests.discovery(etcd))
            let console = try await cluster.control(a)
            #expect(try await console.awaitFiber(ofEntry: "greeter", inState: "active")?.provider("clock") == "b")
            // A real service value of b's, to copy: the fakes offer the same interface and version.
            let real = try #require(await etcd.control(["get", "--prefix", "cordis/services/b/", "--print-value-only"]))
            let template = try JSONParser().parse(Array(real.split(separator: "\n").first.map(String.init)?.utf8 ?? "".utf8))
            let loop = try EventLoop(name: "burst")
            defer { Task { await loop.shutdown() } }
            let client = EtcdClient(endpoints: try EtcdEndpoint.list(parsing: etcd.discovery), loop: loop, requestTimeout: .seconds(10))
            let names = (0..<Self.count).map { "fake\($0)" }
            try await Self.each(names) { name in
                let member: JSONValue = [
                    "name": .string(name), "incarnation": .string("i-\(name)"),
                    "addresses": .array([.string("unix:/nonexistent/\(name).sock")]), "version": "1.4",
                ]
                try await client.put("cordis/members/\(name)", member.serialized())
                var service = template.objectValue ?? [:]
                service["node"] = .string(name)
                service["incarnation"] = .string("i-\(name)")
                service["life"] = 1
                try await client.put("cordis/services/\(name)/1", JSONValue.object(service).serialized())
            }
            try await Self.each(names) { name in
                _ = try await client.delete("cordis/members/\(name)")
                _ = try await client.delete("cordis/services/\(name)/1")
            }
            // The fakes offered clock too, so a's greeter may have bound to one and lost it with its key:
            // once they are gone it is bound to b again.
            #expect(try await console.awaitFiber(ofEntry: "greeter", inState: "active", timeout: .seconds(30))?.provider("clock") == "b")
            for member in [a, b] {
                #expect(!member.process.text.contains("as a new incarnation"), "\(member.process.text.suffix(2000))")
                #expect(!member.process.text.contains("degraded: "), "\(member.process.text.suffix(2000))")
                // The mass delete is logged rate-limited, not once per fake member.
                #expect(member.process.text.occurrences(of: "left etcd") < 100, "\(member.process.text.occurrences(of: "left etcd"))")
            }
        }
    }
}
