import CordisJSON
import CordisProcessTesting
import Foundation
import Testing

/// The freshness record of signed trees with a real node: a tree is applied only once its version is
/// recorded durably, so a node that cannot record it refuses the tree and stays as it was (a captured
/// older tree cannot roll it back later).
@Suite("Signed tree versions are recorded before the tree applies", .serialized)
struct SignedVersionRecordTests {
    @Test("a tree whose version cannot be recorded is refused and leaves the entries file unchanged")
    func unrecordedVersionIsRefused() async throws {
        let cluster = try Cluster()
        defer { Task { await cluster.stop() } }
        let setup = try await SignedTreeApplyTests.setUp(cluster)
        let record = cluster.entries("a") + ".signed-version"
        // The node writes the record through a temporary file named after its pid: a folder there makes
        // that write fail, as a full disk would.
        let blocker = record + ".tmp.\(setup.node.process.processIdentifier)"
        try FileManager.default.createDirectory(atPath: blocker, withIntermediateDirectories: false)
        let five = try await SignedTreeApplyTests.opensslEnvelope(setup, "five", payload: SignedTreeApplyTests.payload(version: 5))
        try await SignedTreeApplyTests.expectRefused(setup, five, rule: "freshness")
        #expect(!FileManager.default.fileExists(atPath: record))
        try FileManager.default.removeItem(atPath: blocker)
        let applied = try await cluster.console("a", ["apply", five])
        #expect(applied.code == 0, "\(applied.err)")
        let kept = try JSONParser().parse(Array(try Data(contentsOf: URL(fileURLWithPath: record))))
        #expect(kept["version"] == 5)
        // An older tree, still valid, is refused as a replay.
        let four = try await SignedTreeApplyTests.opensslEnvelope(setup, "four", payload: SignedTreeApplyTests.payload(version: 4))
        try await SignedTreeApplyTests.expectRefused(setup, four, rule: "freshness")
    }
}
