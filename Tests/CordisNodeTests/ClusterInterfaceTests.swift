import CordisNode
import CordisProcessTesting
import Foundation
import Testing

/// Interface versions across nodes: a consumer whose node knows another version of a service's interface
/// stays pending, with the reason in its status.
///
/// The provider's node is `cordis-test-node` (`cordis-node` with the package's test hooks) told, through
/// `CORDIS_TEST_INTERFACE_VERSIONS`, to claim another version of the `clock` interface, as a node built
/// from a changed `ClockAPI` would; building a second binary in a test is not possible here.
@Suite("Cluster: interface versions")
struct ClusterInterfaceTests {
    @Test("A consumer stays pending, with the reason in waiting, when the provider speaks another interface version")
    func interfaceVersionMismatch() async throws {
        try await TestCluster.run { cluster in
            let b = try await cluster.start(
                "b", entries: #"[{"id": "clock", "plugin": "clock"}]"#,
                environment: ["CORDIS_TEST_INTERFACE_VERSIONS": "clock=0-other"], executable: NodeProcess.testNodeExecutable)
            let a = try await cluster.start("a", entries: #"[{"id": "greeter", "plugin": "greeter"}]"#, peers: [b])
            try #require(await a.waitForLine(containing: "interface mismatch"))
            let console = try await cluster.control(a)
            let greeter = try #require(try await console.fiber(ofEntry: "greeter"))
            #expect(greeter["state"]?.stringValue == "pending")
            #expect(greeter["missing"]?.arrayValue == ["clock"])
            let reason = greeter["waiting"]?.objectValue?["clock"]?.stringValue ?? ""
            #expect(reason.contains("version 0-other"))
            #expect(reason.contains("on b"))
            #expect(!a.process.text.contains("hello at"))
        }
    }
}
