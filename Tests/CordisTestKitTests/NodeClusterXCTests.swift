import CordisTestKit
import XCTest

/// The kit under XCTest: a cluster started in the test, shut down at its end, a `TestKitError` thrown
/// into XCTest's hands.
final class NodeClusterXCTests: XCTestCase {
    func testClusterUnderXCTest() async throws {
        let cluster = try await NodeCluster.start([
            NodeSpec("a", entries: [Entry(id: "clock", plugin: "clock")]), NodeSpec("b", entries: [Entry(id: "greeter", plugin: "greeter")]),
        ])
        do {
            let greeter = try await cluster.node("b").awaitFiber("greeter", .active)
            XCTAssertEqual(greeter.injects.first?.provider?.node, "a")
            do {
                try await cluster.node("b").awaitFiber("nothing", .active, within: .milliseconds(200))
                XCTFail("a wait for an entry that does not exist returned")
            } catch let error as TestKitError {
                XCTAssertEqual(error.code, .timeout)
                XCTAssertTrue(error.description.contains("--- b ---"), error.description)
            }
        } catch {
            await cluster.shutdown()
            throw error
        }
        await cluster.shutdown()
        XCTAssertFalse(FileManager.default.fileExists(atPath: cluster.folder.path))
        XCTAssertTrue(cluster.nodes.allSatisfy { !$0.isRunning })
    }
}
