import CordisProcessTesting
import Foundation
import Synchronization
import Testing

/// The outcome of one `cordis-console` run: exit code, stdout and stderr apart.
struct ConsoleResult: Sendable {
    var code: Int32
    var out: String
    var err: String
}

/// Runs the real `cordis-console` with `arguments`, draining its output while it runs, and waits for it
/// to exit (killed after `deadline`, which fails the test).
func runConsole(_ arguments: [String], environment: [String: String] = [:], deadline: Duration = .seconds(30)) async throws -> ConsoleResult {
    var env = ProcessInfo.processInfo.environment
    env["CORDIS_CONSOLE_NODE"] = nil
    for (key, value) in environment { env[key] = value }
    // Close-on-exec from the start, so a node another test starts meanwhile does not inherit these pipe
    // ends and keep them open after the console exits (its end of file would then never come).
    let outPipe = try ChildPipe()
    let errPipe = try ChildPipe()
    let buffers = Mutex<(out: Data, err: Data, openPipes: Int, code: Int32?, waiter: CheckedContinuation<Void, Never>?)>((Data(), Data(), 2, nil, nil))
    @Sendable func finishIfDone(_ state: inout (out: Data, err: Data, openPipes: Int, code: Int32?, waiter: CheckedContinuation<Void, Never>?)) -> CheckedContinuation<Void, Never>? {
        guard state.openPipes == 0, state.code != nil else { return nil }
        defer { state.waiter = nil }
        return state.waiter
    }
    for (index, pipe) in [outPipe, errPipe].enumerated() {
        PipeDrain.start(reading: pipe.reading, onData: { data in
            buffers.withLock { state in
                if index == 0 { state.out.append(data) } else { state.err.append(data) }
            }
        }, onEnd: {
            let ready = buffers.withLock { state -> CheckedContinuation<Void, Never>? in
                state.openPipes -= 1
                return finishIfDone(&state)
            }
            ready?.resume()
        })
    }
    let process: ChildProcess
    do {
        process = try ChildProcess(
            executable: NodeProcess.productsDirectory.appendingPathComponent("cordis-console"), arguments: arguments,
            environment: env, standardOutput: outPipe.writing.fileDescriptor, standardError: errPipe.writing.fileDescriptor,
            onExit: { termination in
                let ready = buffers.withLock { state -> CheckedContinuation<Void, Never>? in
                    state.code = termination.status
                    return finishIfDone(&state)
                }
                ready?.resume()
            })
    } catch {
        for pipe in [outPipe, errPipe] { try? pipe.writing.close() }
        throw error
    }
    // The console has its copies; the drains see end of file once it (and only it) closes them.
    for pipe in [outPipe, errPipe] { try? pipe.writing.close() }
    let killer = Task {
        try? await Task.sleep(for: deadline)
        guard !Task.isCancelled else { return }
        let seen = buffers.withLock { state in
            "exit \(state.code.map(String.init) ?? "not seen"), \(state.openPipes) pipe(s) not at end of file"
        }
        Issue.record("cordis-console \(arguments) did not finish within \(deadline) (\(seen))")
        process.signal(SIGKILL)
        // Whatever is missing (an exit never reported, a pipe never closed), stop waiting.
        let waiter = buffers.withLock { state -> CheckedContinuation<Void, Never>? in
            state.openPipes = 0
            if state.code == nil { state.code = -1 }
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume()
    }
    defer { killer.cancel() }
    await withCheckedContinuation { continuation in
        let done = buffers.withLock { state -> Bool in
            if state.openPipes == 0, state.code != nil { return true }
            state.waiter = continuation
            return false
        }
        if done { continuation.resume() }
    }
    return buffers.withLock { state in
        ConsoleResult(
            code: state.code ?? -1, out: String(decoding: state.out, as: UTF8.self),
            err: String(decoding: state.err, as: UTF8.self))
    }
}
