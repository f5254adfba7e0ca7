import CordisProcessTesting
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The real `cordis-console` whose stdout reader went away (`cordis-console … | head -1` after head
/// exited): it is never killed by SIGPIPE; a one-shot command ends with its own exit code, and
/// `events --follow` ends with 0 at its next event instead of following into nowhere.
@Suite("cordis-console with a closed output", .serialized)
struct ConsoleClosedOutputTests {
    /// Starts `cordis-console ARGUMENTS` against node `a` of `cluster` with stdout a pipe whose reading
    /// end is already closed.
    static func consoleWritingIntoAClosedPipe(_ cluster: Cluster, _ arguments: [String]) throws -> ChildProcess {
        let pipe = try ChildPipe()
        let console = try ChildProcess(
            executable: NodeProcess.productsDirectory.appendingPathComponent("cordis-console"),
            arguments: ["--node", cluster.address("a"), "--timeout", "5"] + arguments,
            directory: cluster.folder.url, standardOutput: pipe.writing.fileDescriptor)
        try pipe.writing.close()
        try pipe.reading.close()
        return console
    }

    /// The console's end, or nil when it has not ended within `deadline` (then it is killed).
    static func end(of console: ChildProcess, within deadline: Duration) async -> ChildProcess.Termination? {
        let killer = Task {
            try? await Task.sleep(for: deadline)
            guard !Task.isCancelled else { return }
            console.signal(SIGKILL)
        }
        let termination = await console.exit()
        killer.cancel()
        return termination.reason == .uncaughtSignal && termination.status == SIGKILL ? nil : termination
    }

    @Test("status into a closed pipe ends with its own exit code; events --follow ends with 0 at its next event")
    func closedOutputEndsTheConsoleCleanly() async throws {
        let cluster = try Cluster()
        defer { Task { await cluster.stop() } }
        try await cluster.start("a", entries: #"{"version":1,"entries":[{"id":"clock","plugin":"clock"}]}"#)
        let status = try Self.consoleWritingIntoAClosedPipe(cluster, ["status"])
        let statusEnd = await Self.end(of: status, within: .seconds(30))
        #expect(statusEnd?.reason == .exit && statusEnd?.status == 0, "\(String(describing: statusEnd))")

        let follow = try Self.consoleWritingIntoAClosedPipe(cluster, ["events", "--follow"])
        defer { follow.signal(SIGKILL) }
        // Events until the follower has ended: each is one more write into the closed pipe.
        let deadline = ContinuousClock.now + .seconds(20)
        var disabled = false
        while follow.isRunning, ContinuousClock.now < deadline {
            let change = try await cluster.console("a", [disabled ? "enable" : "disable", "a:clock"])
            #expect(change.code == 0, "\(change)")
            disabled.toggle()
        }
        let followEnd = await Self.end(of: follow, within: .seconds(10))
        #expect(followEnd?.reason == .exit && followEnd?.status == 0, "\(String(describing: followEnd))")
    }
}
