import CordisProcessTesting
import Foundation

/// A program run from the repository's root with a hard deadline: its exit status and its output
/// (stdout and stderr together, drained while it runs).
struct ProgramRun: Sendable {
    let status: Int32
    let output: String

    /// Runs `python3 -u ARGUMENTS` (unbuffered, so a killed run still shows how far it got).
    static func python(_ arguments: [String], deadline: Duration = .seconds(90)) async throws -> ProgramRun {
        try await run(URL(fileURLWithPath: "/usr/bin/env"), ["python3", "-u"] + arguments, deadline: deadline)
    }

    /// Runs `executable ARGUMENTS`; past `deadline` the process (and only it) is killed and the status is -1.
    static func run(_ executable: URL, _ arguments: [String], deadline: Duration = .seconds(90)) async throws -> ProgramRun {
        let (termination, output) = try await ChildProcess.run(
            executable, arguments, directory: Repository.root, deadline: deadline)
        return ProgramRun(status: termination?.status ?? -1, output: output)
    }
}
