import Foundation
import Synchronization

/// A program run from the repository's root with a hard deadline: its exit status and its output
/// (stdout and stderr, written to a file so nothing blocks on a full pipe).
struct ProgramRun: Sendable {
    let status: Int32
    let output: String

    /// Runs `python3 -u ARGUMENTS` (unbuffered, so a killed run still shows how far it got).
    static func python(_ arguments: [String], deadline: Duration = .seconds(90)) async throws -> ProgramRun {
        try await run(URL(fileURLWithPath: "/usr/bin/env"), ["python3", "-u"] + arguments, deadline: deadline)
    }

    /// Runs `executable ARGUMENTS`; past `deadline` the process (and only it) is killed and the status is -1.
    static func run(_ executable: URL, _ arguments: [String], deadline: Duration = .seconds(90)) async throws -> ProgramRun {
        let log = FileManager.default.temporaryDirectory.appendingPathComponent("cordis-python-\(UUID().uuidString).log")
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        defer { try? FileManager.default.removeItem(at: log) }
        let handle = try FileHandle(forWritingTo: log)
        defer { try? handle.close() }
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        process.currentDirectoryURL = Repository.root
        process.standardOutput = handle
        process.standardError = handle
        process.standardInput = FileHandle.nullDevice
        let completion = Completion()
        let status = await withCheckedContinuation { (continuation: CheckedContinuation<Int32, Never>) in
            completion.wait(continuation)
            process.terminationHandler = { ended in _ = completion.finish(ended.terminationStatus) }
            do {
                try process.run()
            } catch {
                _ = completion.finish(127)
                return
            }
            let pid = process.processIdentifier
            let seconds = Double(deadline.components.seconds) + Double(deadline.components.attoseconds) * 1e-18
            DispatchQueue.global().asyncAfter(deadline: .now() + seconds) {
                if completion.finish(-1) { kill(pid, SIGKILL) }
            }
        }
        let output = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
        return ProgramRun(status: status, output: output)
    }
}

/// The one answer of a run: its exit status, or -1 once the deadline passed (whichever comes first).
private final class Completion: Sendable {
    private let continuation = Mutex<CheckedContinuation<Int32, Never>?>(nil)

    func wait(_ waiter: CheckedContinuation<Int32, Never>) {
        continuation.withLock { $0 = waiter }
    }

    /// Resumes the waiter with `status`; false when it was already resumed.
    func finish(_ status: Int32) -> Bool {
        guard let waiter = continuation.withLock({ $0.take() }) else { return false }
        waiter.resume(returning: status)
        return true
    }
}
