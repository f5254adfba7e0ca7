import Foundation
import Synchronization

/// A real `cordis-node` process (or any node built on `NodeRunner`, or any program) started by a test:
/// its output is drained while it runs, lines can be awaited with a deadline, and only this process is
/// signalled or killed.
///
/// It is started with `CORDIS_EXIT_WITH_PARENT` set to this process's id (`parentVariable`): a node
/// built on `NodeRunner` then asks the kernel to kill it when this process dies, even by SIGKILL, so a
/// killed test leaves no node behind. Thread-safe.
public final class NodeProcess: Sendable {
    /// The environment variable that tells a node which process started it: a node built on
    /// `NodeRunner` dies with that process (`PR_SET_PDEATHSIG`), or exits at once when it is already gone.
    public static let parentVariable = "CORDIS_EXIT_WITH_PARENT"

    /// Where the built executables are: next to the test bundle.
    public static var productsDirectory: URL {
        let executable = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        return executable.deletingLastPathComponent()
    }

    private struct Output {
        var text = ""
        var waiters: [(id: Int, predicate: @Sendable (String) -> Bool, continuation: CheckedContinuation<Bool, Never>)] = []
        var nextWaiter = 0
        var exitCode: Int32?
        /// How many of the two output pipes reached end of file.
        var closedPipes = 0
        /// The exit code once the process exited and all its output was read.
        var finished: Int32? { closedPipes >= 2 ? exitCode : nil }
        var exitWaiters: [CheckedContinuation<Int32, Never>] = []
    }

    /// The name the test gave the process (a node's name), used in reports.
    public let name: String
    /// The child itself: its pid, whether it runs, how it ended.
    public let process: ChildProcess
    private let output: OutputBox

    /// Holds the output state behind a lock, shareable with the pipe and termination handlers.
    private final class OutputBox: Sendable {
        private let state = Mutex(Output())
        func withLock<T>(_ body: (inout Output) -> T) -> T { state.withLock { body(&$0) } }
    }

    /// The built `cordis-node`.
    public static var nodeExecutable: URL { productsDirectory.appendingPathComponent("cordis-node") }
    /// The built `cordis-test-node`: `cordis-node` with the package's test hooks.
    public static var testNodeExecutable: URL { productsDirectory.appendingPathComponent("cordis-test-node") }

    /// Starts `executable` (the built `cordis-node` by default) with `arguments`, in `directory`, with this
    /// process's environment (less systemd's variables) and `environment` on top.
    ///
    /// - Throws: `ChildProcess.SpawnError` when the program cannot be started.
    public init(
        name: String, arguments: [String], directory: URL, environment: [String: String] = [:],
        executable: URL = NodeProcess.nodeExecutable
    ) throws {
        self.name = name
        let output = OutputBox()
        self.output = output
        var env = ProcessInfo.processInfo.environment
        env["NOTIFY_SOCKET"] = nil
        env["JOURNAL_STREAM"] = nil
        env["LISTEN_FDS"] = nil
        env[Self.parentVariable] = String(getpid())
        for (key, value) in environment { env[key] = value }
        // Close-on-exec from the start, so no child another test starts meanwhile inherits these ends and
        // keeps them open after this process exits (its end of file would then never come).
        let stdout = try ChildPipe()
        let stderr = try ChildPipe()
        for pipe in [stdout, stderr] {
            PipeDrain.start(reading: pipe.reading, onData: { [output] data in
                Self.append(String(decoding: data, as: UTF8.self), to: output)
            }, onEnd: { [output] in
                Self.settle(output) { $0.closedPipes += 1 }
            })
        }
        defer { for pipe in [stdout, stderr] { try? pipe.writing.close() } }
        process = try ChildProcess(
            executable: executable, arguments: arguments, directory: directory, environment: env,
            standardOutput: stdout.writing.fileDescriptor, standardError: stderr.writing.fileDescriptor,
            onExit: { [output] termination in
                Self.settle(output) { $0.exitCode = termination.status }
                // If a pipe end leaked anyway (into a grandchild that outlives the process), its end of
                // file waits for that one: after a grace period the exit is reported without it.
                Task {
                    try? await Task.sleep(for: .seconds(2))
                    Self.settle(output) { $0.closedPipes = 2 }
                }
            })
    }

    /// Applies `change`; once the process exited and both pipes are drained, wakes the exit waiters (so an
    /// exit code is only reported with all of the process's output).
    private static func settle(_ output: OutputBox, _ change: @escaping (inout Output) -> Void) {
        let (waiters, code, lines) = output.withLock {
            state -> ([CheckedContinuation<Int32, Never>], Int32?, [(CheckedContinuation<Bool, Never>, Bool)]) in
            change(&state)
            guard let code = state.finished else { return ([], nil, []) }
            // No more output will come: every wait for some learns now whether the output has it.
            let text = state.text
            let lines = state.waiters.map { ($0.continuation, $0.predicate(text)) }
            state.waiters.removeAll()
            defer { state.exitWaiters.removeAll() }
            return (state.exitWaiters, code, lines)
        }
        for (waiter, matched) in lines { waiter.resume(returning: matched) }
        if let code { for waiter in waiters { waiter.resume(returning: code) } }
    }

    private static func append(_ text: String, to output: OutputBox) {
        let ready = output.withLock { state -> [CheckedContinuation<Bool, Never>] in
            state.text += text
            var matched: [CheckedContinuation<Bool, Never>] = []
            state.waiters.removeAll { waiter in
                guard waiter.predicate(state.text) else { return false }
                matched.append(waiter.continuation)
                return true
            }
            return matched
        }
        for continuation in ready { continuation.resume(returning: true) }
    }

    /// Everything the process printed so far (stdout and stderr interleaved).
    public var text: String { output.withLock { $0.text } }

    /// Waits until the output satisfies `predicate`, at most `timeout`; false when it did not, at the
    /// deadline or as soon as the process has exited and its output is all read (`what` names the wait
    /// for the caller's report).
    public func waitUntil(
        _ what: String, timeout: Duration = .seconds(20), _ predicate: @escaping @Sendable (String) -> Bool
    ) async -> Bool {
        let id = output.withLock { state -> Int in
            state.nextWaiter += 1
            return state.nextWaiter
        }
        let timer = Task { [output] in
            try? await Task.sleep(for: timeout)
            let expired = output.withLock { state -> CheckedContinuation<Bool, Never>? in
                guard let index = state.waiters.firstIndex(where: { $0.id == id }) else { return nil }
                return state.waiters.remove(at: index).continuation
            }
            expired?.resume(returning: false)
        }
        defer { timer.cancel() }
        let matched = await withCheckedContinuation { continuation in
            let already = output.withLock { state -> Bool? in
                if predicate(state.text) { return true }
                // The process exited and all its output was read: it will print nothing more.
                if state.finished != nil { return false }
                state.waiters.append((id, predicate, continuation))
                return nil
            }
            if let already { continuation.resume(returning: already) }
        }
        return matched
    }

    /// Sends `signal` to this process.
    public func signal(_ signal: Int32) {
        process.signal(signal)
    }

    /// Waits for the process to exit (at most `timeout`); kills it if it does not, and returns nil.
    public func exitCode(timeout: Duration = .seconds(20)) async -> Int32? {
        let timer = Task { [process, output] in
            try? await Task.sleep(for: timeout)
            guard !Task.isCancelled else { return }
            process.signal(SIGKILL)
            // Past the deadline, stop waiting for the pipes to drain (bounded even if something else holds them).
            Self.settle(output) { $0.closedPipes = 2 }
        }
        defer { timer.cancel() }
        let code = await withCheckedContinuation { continuation in
            let known = output.withLock { state -> Int32? in
                if let code = state.finished { return code }
                state.exitWaiters.append(continuation)
                return nil
            }
            if let known { continuation.resume(returning: known) }
        }
        return code
    }

    /// Stops the process (SIGSTOP) and waits until every one of its threads is stopped (as `/proc` shows
    /// it): a signal is delivered asynchronously, so without this the process could still answer a
    /// message sent right after `signal(SIGSTOP)`. Checks at most `maxChecks` times within `timeout`,
    /// yielding between checks; false when it did not stop.
    public func pause(timeout: Duration = .seconds(10), maxChecks: Int = 1_000_000) async -> Bool {
        signal(SIGSTOP)
        let tasks = "/proc/\(process.processIdentifier)/task"
        let deadline = ContinuousClock.now + timeout
        var checks = 0
        while checks < maxChecks, ContinuousClock.now < deadline {
            checks += 1
            let threads = (try? FileManager.default.contentsOfDirectory(atPath: tasks)) ?? []
            let stopped = !threads.isEmpty && threads.allSatisfy { thread in
                guard let stat = try? String(contentsOfFile: "\(tasks)/\(thread)/stat", encoding: .utf8),
                      let close = stat.lastIndex(of: ")")
                else { return false }
                // `pid (comm) S …`: the state follows the command name's closing parenthesis.
                let state = stat[stat.index(after: close)...].trimmingCharacters(in: .whitespaces).first
                return state == "T" || state == "t"
            }
            if stopped { return true }
            await Task.yield()
        }
        return false
    }

    /// Kills the process if it still runs (SIGKILL) and waits for it.
    public func stop() async {
        signal(SIGKILL)
        _ = await exitCode(timeout: .seconds(10))
    }
}

/// A temporary folder for one test, with short paths for Unix sockets (`/tmp/cn-XXXXXXXX`), removed by
/// `remove()`.
public struct TestFolder: Sendable {
    /// The folder.
    public let url: URL

    /// Creates a new folder under `/tmp` with a random name. Throws when it cannot be created.
    public init() throws {
        let base = URL(fileURLWithPath: "/tmp", isDirectory: true)
            .appendingPathComponent("cn-\(UUID().uuidString.prefix(8))", isDirectory: true)
        try FileManager.default.createDirectory(at: base, withIntermediateDirectories: true)
        url = base
    }

    /// The path of `name` in the folder.
    public func path(_ name: String) -> String { url.appendingPathComponent(name).path }

    /// Writes `text` to the file `name` in the folder (atomically). Throws when it cannot be written.
    public func write(_ name: String, _ text: String) throws {
        try text.write(to: url.appendingPathComponent(name), atomically: true, encoding: .utf8)
    }

    /// Removes the folder and everything in it.
    public func remove() {
        try? FileManager.default.removeItem(at: url)
    }
}
