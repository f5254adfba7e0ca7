import CordisProcessTesting
import Foundation
import Testing

/// The README's first command, run the way a test can: `scripts/cluster.sh --tour --batch` with the
/// binaries of this build, every step's result checked in its output.
@Suite("Guided tour", .timeLimit(.minutes(3)))
struct TourTests {
    /// The package's root folder (this file is in Tests/CordisNodeTests).
    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    @Test(.enabled(if: FileManager.default.isExecutableFile(
        atPath: NodeProcess.productsDirectory.appendingPathComponent("cordis-console").path)))
    func theTourRunsEveryStepWithTheExpectedResults() async throws {
        let folder = try TestFolder()
        defer { folder.remove() }
        let tour = try NodeProcess(
            name: "tour", arguments: [Self.packageRoot.appendingPathComponent("scripts/cluster.sh").path, "--tour", "--batch"],
            directory: folder.url, environment: ["CORDIS_BIN": NodeProcess.productsDirectory.path],
            executable: URL(fileURLWithPath: "/bin/bash"))
        defer { tour.signal(SIGTERM) }
        #expect(await tour.exitCode(timeout: .seconds(150)) == 0)
        let output = tour.text
        let steps = output.components(separatedBy: "\n== ")
        try #require(steps.count >= 9, "the tour printed \(steps.count - 1) steps:\n\(output)")
        // 1: three nodes, the consumers on a active with providers on b.
        #expect(steps[1].contains("greeter (greeter) active") && steps[1].contains("uses clock → b:"))
        // 2: withdrawing counter on b drops the badge on a, whose disposer sets the counter back.
        #expect(steps[2].contains("b:counter disabled") && steps[2].contains("badge removed, counter at 5"))
        // 3: the counter returns; the badge adds 1 again.
        #expect(steps[3].contains("b:counter active") && steps[3].contains("\n6\n"))
        // 4: an invalid config is rejected with exit 1 and the counter keeps running.
        #expect(steps[4].contains("invalid config:") && steps[4].contains("(at start)") && steps[4].contains("(exit 1)"))
        #expect(steps[4].contains("counter (counter) active"))
        // 5: node b killed: greeter fails over to c, badge pending, b unreachable (exit 3).
        #expect(steps[5].contains("uses clock → c:") && steps[5].contains("badge (badge) pending"))
        #expect(steps[5].contains("unreachable") && steps[5].contains("(exit 3)"))
        // 6: b restarted: the badge is active again.
        #expect(steps[6].contains("badge (badge) active"))
        // 7: a greeter in the shared realm blue uses c's blue clock.
        #expect(steps[7].contains("greeter-blue (greeter)") && steps[7].contains("clock@blue"))
        #expect(steps[8].hasPrefix("Tour done."))
    }
}
