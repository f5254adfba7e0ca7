import CordisNode
import Foundation
import Testing

/// Real `cordis-node` processes that dial each other at once, one of them reachable on two addresses:
/// the pair keeps one link without any visible change, and the provider's death still reaches the
/// consumers.
@Suite("Cluster: duplicate links")
struct ClusterDuplicateLinkTests {
    @Test(
        "Two nodes dialling each other, one on two addresses, keep one link; consumers do not reload and go pending when the provider dies",
        arguments: 0 ..< 3)
    func mutualDialling(round: Int) async throws {
        try await TestCluster.run { cluster in
            let bAddress = "unix:\(cluster.folder.path("b.sock"))"
            // a listens on two sockets (both advertised) and dials b before b is up; b dials a.
            let a = try await cluster.start(
                "a", entries: #"[{"id": "clock", "plugin": "clock"}]"#,
                extra: ["--listen", "unix:\(cluster.folder.path("a2.sock"))", "--peer", bAddress, "--log-level", "debug"])
            let b = try await cluster.start(
                "b", entries: #"[{"id": "greeter", "plugin": "greeter"}]"#, peers: [a], extra: ["--log-level", "debug"])
            try #require(await b.waitForLine(containing: "hello at"))
            try #require(await a.waitForLine(containing: "linked to b"))
            let console = try await cluster.control(b)
            try #require(try await console.awaitFiber(ofEntry: "greeter", inState: "active") != nil)
            // a's own dialler has reached b by now, or waits because b is linked: either way, one link.
            #expect(try await console.request(.members).objectValue?["members"]?.arrayValue?.count == 2)
            #expect(b.process.text.occurrences(of: "hello at") == 1, "b's greeter reloaded:\n\(b.process.text)")
            #expect(b.process.text.occurrences(of: "link to a lost") == 0)
            #expect(a.process.text.occurrences(of: "link to b lost") == 0)

            a.process.signal(SIGKILL)
            #expect(await a.process.exitCode() == SIGKILL)
            #expect(try await console.awaitFiber(ofEntry: "greeter", inState: "pending", timeout: .seconds(5)) != nil)
            #expect(await b.waitForLine(containing: "link to a lost"))
        }
    }
}
