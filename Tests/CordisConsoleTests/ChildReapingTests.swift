import CordisProcessTesting
import Foundation
import Testing

/// Every child the test harness starts is reaped on its own: a child that closes the descriptors it
/// inherited and stays alive (as `systemd-socket-activate` does before it starts a node) must not hold
/// back the exit of any other child.
@Suite("Child reaping", .serialized)
struct ChildReapingTests {
    static let python = URL(fileURLWithPath: "/usr/bin/python3")

    /// A child that closes every inherited descriptor above stderr, says so, and stays alive.
    static func startHolder(in folder: TestFolder) async throws -> NodeProcess {
        let script = "import os, sys, time; os.closerange(3, 4096); print('closed', flush=True); time.sleep(60)"
        let holder = try NodeProcess(name: "holder", arguments: ["-c", script], directory: folder.url, executable: python)
        try #require(await holder.waitForLine(containing: "closed"))
        return holder
    }

    @Test(
        "A short program's exit is seen while another child that closed its descriptors still runs",
        .enabled(if: FileManager.default.isExecutableFile(atPath: python.path)))
    func shortProgramExitIsSeenWhileDescriptorClosingChildRuns() async throws {
        let folder = try TestFolder()
        defer { folder.remove() }
        let holder = try await Self.startHolder(in: folder)
        // Past this deadline the holder is killed, which would release a reaper it stalled: the test
        // then fails on the time taken instead of hanging.
        let watchdog = Task {
            try? await Task.sleep(for: .seconds(10))
            guard !Task.isCancelled else { return }
            holder.signal(SIGKILL)
        }
        let started = ContinuousClock.now
        let quick = try NodeProcess(
            name: "true", arguments: [], directory: folder.url, executable: URL(fileURLWithPath: "/bin/true"))
        let code = await quick.exitCode(timeout: .seconds(60))
        let taken = ContinuousClock.now - started
        watchdog.cancel()
        #expect(code == 0)
        #expect(taken < .seconds(10), "the short program's exit was seen only after \(taken)")
        #expect(holder.process.isRunning, "the holder was killed before the short program's exit was seen")
        await holder.stop()
    }

    @Test(
        "A console run finishes while another child that closed its descriptors still runs",
        .enabled(if: FileManager.default.isExecutableFile(atPath: python.path)))
    func consoleRunFinishesWhileDescriptorClosingChildRuns() async throws {
        let folder = try TestFolder()
        defer { folder.remove() }
        let holder = try await Self.startHolder(in: folder)
        let watchdog = Task {
            try? await Task.sleep(for: .seconds(10))
            guard !Task.isCancelled else { return }
            holder.signal(SIGKILL)
        }
        let started = ContinuousClock.now
        let result = try await runConsole(["--help"], deadline: .seconds(60))
        let taken = ContinuousClock.now - started
        watchdog.cancel()
        #expect(result.code == 0, "\(result.err)")
        #expect(taken < .seconds(10), "the console's exit was seen only after \(taken)")
        #expect(holder.process.isRunning, "the holder was killed before the console's exit was seen")
        await holder.stop()
    }
}
