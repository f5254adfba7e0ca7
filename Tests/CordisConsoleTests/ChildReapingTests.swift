import CordisProcessTesting
import Foundation
import Testing

/// Every child the test harness starts is reaped on its own: a child that closes the descriptors it
/// inherited and stays alive (as `systemd-socket-activate` does before it starts a node) must not hold
/// back the exit of any other child.
@Suite("Child reaping", .serialized)
struct ChildReapingTests {
    static let python = URL(fileURLWithPath: "/usr/bin/python3")

    /// A child that closes every inherited descriptor above stderr, says so, and stays alive until a
    /// signal ends it.
    static func startHolder(in folder: TestFolder) async throws -> NodeProcess {
        let script = "import os, signal; os.closerange(3, 4096); print('closed', flush=True); signal.pause()"
        let holder = try NodeProcess(name: "holder", arguments: ["-c", script], directory: folder.url, executable: python)
        try #require(await holder.waitForLine(containing: "closed"))
        return holder
    }

    /// Runs `short` (which starts a short child and returns once its exit is seen) while a holder runs,
    /// and checks that the exit was seen within 10 s with the holder still alive. Past that deadline the
    /// holder is killed, which would release a reaper it stalled: the test then fails on the time taken
    /// instead of hanging.
    static func whileHolderRuns(_ what: String, _ short: () async throws -> Void) async throws {
        let folder = try TestFolder()
        defer { folder.remove() }
        let holder = try await startHolder(in: folder)
        let watchdog = Task {
            try? await Task.sleep(for: .seconds(10))
            guard !Task.isCancelled else { return }
            holder.signal(SIGKILL)
        }
        let started = ContinuousClock.now
        try await short()
        let taken = ContinuousClock.now - started
        watchdog.cancel()
        #expect(taken < .seconds(10), "\(what) was seen only after \(taken)")
        #expect(holder.process.isRunning, "the holder was killed before \(what) was seen")
        await holder.stop()
    }

    @Test(
        "A short program's exit is seen while another child that closed its descriptors still runs",
        .enabled(if: FileManager.default.isExecutableFile(atPath: python.path)))
    func shortProgramExitIsSeenWhileDescriptorClosingChildRuns() async throws {
        try await Self.whileHolderRuns("the short program's exit") {
            let folder = try TestFolder()
            defer { folder.remove() }
            let quick = try NodeProcess(
                name: "true", arguments: [], directory: folder.url, executable: URL(fileURLWithPath: "/bin/true"))
            #expect(await quick.exitCode(timeout: .seconds(60)) == 0)
        }
    }

    @Test(
        "A console run finishes while another child that closed its descriptors still runs",
        .enabled(if: FileManager.default.isExecutableFile(atPath: python.path)))
    func consoleRunFinishesWhileDescriptorClosingChildRuns() async throws {
        try await Self.whileHolderRuns("the console's exit") {
            let result = try await runConsole(["--help"], deadline: .seconds(60))
            #expect(result.code == 0, "\(result.err)")
        }
    }
}
