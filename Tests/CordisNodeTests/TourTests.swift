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
        try #require(steps.count >= 15, "the tour printed \(steps.count - 1) steps:\n\(output)")
        /// What each step's output must hold, by step.
        let expected: [(Int, [String])] = [
            // Three nodes; the consumers on a use providers on b; the blue greeter waits for its clock.
            (1, ["greeter (greeter) active", "uses clock → b:", "greeter-blue (greeter) pending",
                 "lounge-badge (badge) in lounge active", "flaky (flaky) active"]),
            // Withdrawing counter on b drops the badges, whose disposers set the counter back.
            (2, ["b:counter disabled", "badge removed, counter at 5", "waits for counter"]),
            (3, ["b:counter active", "\n7\n"]),
            // A valid config restarts the counter from it; an invalid one is refused and changes nothing.
            (4, ["\n12\n"]),
            (5, ["invalid config:", "(at start)", "(exit 1)", "\n12\n"]),
            // The missing blue clock added on c; withdrawn again, only the blue greeter drops.
            (6, ["c:clock-blue active", "clock@blue"]),
            (7, ["c:clock-blue disabled", "greeter-blue (greeter) pending", "greeter (greeter) active"]),
            // A whole group disabled.
            (8, ["lounge (group) disabled", "\n11\n"]),
            // A plugin failed by its config, recovered by restart.
            (9, ["a:flaky failed", "a:flaky active"]),
            // The stateful counter restarted: its consumers reload and count again.
            (10, ["\n16\n", "\n11\n"]),
            // b killed: the greeters fail over to c, the badge waits, b is unreachable (exit 3); b back.
            (11, ["uses clock → c:", "badge (badge) pending", "unreachable", "(exit 3)"]),
            (12, ["badge (badge) active"]),
            // Every node back to its starting tree.
            (13, ["lounge-badge (badge) in lounge active", "\n7\n"]),
        ]
        for (step, texts) in expected {
            for text in texts { #expect(steps[step].contains(text), "step \(step) lacks \(text.debugDescription):\n\(steps[step])") }
        }
        #expect(steps[14].hasPrefix("Tour done."))
    }
}
