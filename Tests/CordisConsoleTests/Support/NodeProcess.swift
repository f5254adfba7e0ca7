import Foundation
import Synchronization
import Testing

/// A real `cordis-node` process started by a test: its output is drained while it runs, lines can be
/// awaited with a deadline, and only this process is signalled or killed.
final class NodeProcess: Sendable {
    // Adapted from CordisNodeTests/Support (test targets cannot share files); runs any built executable.
    /// Where the built executables are: next to the test bundle.
    static var productsDirectory: URL {
        let executable = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        return executable.deletingLastPathComponent()
    }

    private struct Output {
        var text = ""
        var waiters: [(id: Int, predicate: @Sendable (String) -> Bool, continuation: CheckedContinuation<Bool, Never>)] = []
        var nextWaiter = 0
        var exitCode: Int32?
        var exitWaiters: [CheckedContinuation<Int32, Never>] = []
    }

    let name: String
    let process: Process
    private let output = OutputBox()

    /// Holds the output state behind a lock, shareable with the pipe and termination handlers.
    private final class OutputBox: Sendable {
        private let state = Mutex(Output())
        func withLock<T>(_ body: (inout Output) -> T) -> T { state.withLock { body(&$0) } }
    }

    /// Starts `cordis-node` with `arguments`, in `directory`.
    init(name: String, executable: String = "cordis-node", arguments: [String], directory: URL, environment: [String: String] = [:]) throws {
        self.name = name
        process = Process()
        process.executableURL = Self.productsDirectory.appendingPathComponent(executable)
        process.arguments = arguments
        process.currentDirectoryURL = directory
        var env = ProcessInfo.processInfo.environment
        env["NOTIFY_SOCKET"] = nil
        env["JOURNAL_STREAM"] = nil
        env["LISTEN_FDS"] = nil
        for (key, value) in environment { env[key] = value }
        process.environment = env
        let stdout = Pipe()
        let stderr = Pipe()
        process.standardOutput = stdout
        process.standardError = stderr
        for pipe in [stdout, stderr] {
            pipe.fileHandleForReading.readabilityHandler = { [output] handle in
                let data = handle.availableData
                guard !data.isEmpty else {
                    handle.readabilityHandler = nil
                    return
                }
                Self.append(String(decoding: data, as: UTF8.self), to: output)
            }
        }
        process.terminationHandler = { [output] process in
            let code = process.terminationStatus
            let waiters = output.withLock { state -> [CheckedContinuation<Int32, Never>] in
                state.exitCode = code
                defer { state.exitWaiters.removeAll() }
                return state.exitWaiters
            }
            for waiter in waiters { waiter.resume(returning: code) }
        }
        try process.run()
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
    var text: String { output.withLock { $0.text } }

    /// Waits until the output satisfies `predicate`, at most `timeout`.
    func waitFor(
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
            let already = output.withLock { state -> Bool in
                if predicate(state.text) { return true }
                state.waiters.append((id, predicate, continuation))
                return false
            }
            if already { continuation.resume(returning: true) }
        }
        if !matched {
            Issue.record("\(name): timed out after \(timeout) waiting for \(what); output:\n\(text)")
        }
        return matched
    }

    /// Waits for a line containing `fragment`.
    @discardableResult
    func waitForLine(containing fragment: String, timeout: Duration = .seconds(20)) async -> Bool {
        await waitFor("\"\(fragment)\"", timeout: timeout) { $0.contains(fragment) }
    }

    /// Waits for `fragment` to appear `count` times.
    @discardableResult
    func waitForOccurrences(of fragment: String, count: Int, timeout: Duration = .seconds(20)) async -> Bool {
        await waitFor("\(count)× \"\(fragment)\"", timeout: timeout) { $0.components(separatedBy: fragment).count - 1 >= count }
    }

    /// Sends `signal` to this process.
    func signal(_ signal: Int32) {
        if process.isRunning { kill(process.processIdentifier, signal) }
    }

    /// Waits for the process to exit (at most `timeout`); kills it if it does not, and returns nil.
    func exitCode(timeout: Duration = .seconds(20)) async -> Int32? {
        let timer = Task { [process] in
            try? await Task.sleep(for: timeout)
            if !Task.isCancelled, process.isRunning { kill(process.processIdentifier, SIGKILL) }
        }
        defer { timer.cancel() }
        let code = await withCheckedContinuation { continuation in
            let known = output.withLock { state -> Int32? in
                if let code = state.exitCode { return code }
                state.exitWaiters.append(continuation)
                return nil
            }
            if let known { continuation.resume(returning: known) }
        }
        return code
    }

    /// Kills the process if it still runs (SIGKILL) and waits for it.
    func stop() async {
        signal(SIGKILL)
        _ = await exitCode(timeout: .seconds(10))
    }
}

/// A temporary folder for one test, with short paths for Unix sockets, removed at the end.
struct TestFolder {
    let url: URL

    init() throws {
        let base = URL(fileURLWithPath: "/tmp", isDirectory: true)
            .appendingPathComponent("cn-\(UUID().uuidString.prefix(8))", isDirectory: true)
        try FileManager.default.createDirectory(at: base, withIntermediateDirectories: true)
        url = base
    }

    func path(_ name: String) -> String { url.appendingPathComponent(name).path }

    func write(_ name: String, _ text: String) throws {
        try text.write(to: url.appendingPathComponent(name), atomically: true, encoding: .utf8)
    }

    func remove() {
        try? FileManager.default.removeItem(at: url)
    }
}
