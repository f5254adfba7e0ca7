import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A child process the test harness started itself (posix_spawn) and reaps itself: a thread of its own
/// waits for this one child (`waitid` on its pid), so no other child can hold back its exit.
///
/// Foundation's `Process` watches each child through a socket it leaves open in the child and, once that
/// socket reads end of file, waits for the child with a blocking `waitpid` on the one thread that reaps
/// every `Process`: a child that closes the descriptors it inherited (`systemd-socket-activate` does)
/// and stays alive stalls the exits of all others until it exits.
///
/// The child gets stdin, stdout and stderr only (every other descriptor is closed in it).
public final class ChildProcess: Sendable {
    /// How a child ended: its exit code, or the number of the signal that killed it.
    public struct Termination: Sendable, Equatable {
        /// The exit code, or the signal number when `reason` is `.uncaughtSignal` (as `Process` reports it).
        public let status: Int32
        /// Whether the child exited or was killed by a signal.
        public let reason: Process.TerminationReason
    }

    /// Why a child could not be started.
    public struct SpawnError: Error, CustomStringConvertible {
        /// The program that was to run.
        public let executable: String
        /// The `errno` value posix_spawn reported.
        public let code: Int32
        /// The message: the program and `strerror`'s words for `code`.
        public var description: String { "cannot start \(executable): \(String(cString: strerror(code)))" }
    }

    private struct State {
        /// Set once the child exited and before it is reaped: from then on it is never signalled (its
        /// pid may be reused once reaped).
        var exiting = false
        var termination: Termination?
        var waiters: [CheckedContinuation<Termination, Never>] = []
    }

    /// The child's process id.
    public let processIdentifier: pid_t
    private let state = Mutex(State())

    /// Starts `executable` with `arguments`, in `directory` (the current one when nil), with `environment`
    /// (this process's when nil). `standardInput`, `standardOutput` and `standardError` are descriptors
    /// the child gets as 0, 1 and 2 (`/dev/null` when nil); the caller keeps and closes its own.
    /// `onExit` is called once, on the reaper thread, when the child has exited and been reaped.
    public init(
        executable: URL, arguments: [String], directory: URL? = nil, environment: [String: String]? = nil,
        standardInput: Int32? = nil, standardOutput: Int32? = nil, standardError: Int32? = nil,
        onExit: (@Sendable (Termination) -> Void)? = nil
    ) throws {
        let path = executable.path
        let variables = environment ?? ProcessInfo.processInfo.environment
        let spawned = SpawnThread.shared.run {
            Self.spawn(
                path: path, arguments: arguments, environment: variables, directory: directory?.path,
                descriptors: [standardInput, standardOutput, standardError])
        }
        guard spawned.error == 0 else { throw SpawnError(executable: path, code: spawned.error) }
        let pid = spawned.pid
        processIdentifier = pid

        let thread = Thread { [self] in
            var info = siginfo_t()
            // Wait without reaping, so the pid stays this child's while `exiting` is set.
            while waitid(P_PID, id_t(pid), &info, WEXITED | WNOWAIT) == -1, errno == EINTR {}
            self.state.withLock { $0.exiting = true }
            var status: Int32 = 0
            while waitpid(pid, &status, 0) == -1, errno == EINTR {}
            let signal = status & 0x7f
            let termination = signal == 0
                ? Termination(status: (status >> 8) & 0xff, reason: .exit)
                : Termination(status: signal, reason: .uncaughtSignal)
            let waiters = self.state.withLock { state -> [CheckedContinuation<Termination, Never>] in
                state.termination = termination
                defer { state.waiters.removeAll() }
                return state.waiters
            }
            onExit?(termination)
            for waiter in waiters { waiter.resume(returning: termination) }
        }
        thread.name = "child-reaper"
        thread.start()
    }

    /// posix_spawn of `path`; runs on `SpawnThread` (see there why). `error` is an `errno` value, 0 on success.
    private static func spawn(
        path: String, arguments: [String], environment: [String: String], directory: String?, descriptors: [Int32?]
    ) -> (pid: pid_t, error: Int32) {
        let argv: [UnsafeMutablePointer<CChar>?] = ([path] + arguments).map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        let envp: [UnsafeMutablePointer<CChar>?] = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for pointer in envp { free(pointer) } }

        var actions = posix_spawn_file_actions_t()
        guard posix_spawn_file_actions_init(&actions) == 0 else { return (0, errno) }
        defer { posix_spawn_file_actions_destroy(&actions) }
        var result: Int32 = 0
        for (target, source) in zip([Int32(0), 1, 2], descriptors) {
            if result != 0 { break }
            if let source {
                result = posix_spawn_file_actions_adddup2(&actions, source, target)
            } else {
                result = posix_spawn_file_actions_addopen(&actions, target, "/dev/null", target == 0 ? O_RDONLY : O_WRONLY, 0)
            }
        }
        if result == 0 { result = SpawnActions.closeFrom?(&actions, 3) ?? ENOSYS }
        if result == 0, let directory { result = SpawnActions.changeDirectory?(&actions, directory) ?? ENOSYS }
        guard result == 0 else { return (0, result) }
        var spawned: pid_t = 0
        result = posix_spawn(&spawned, path, &actions, nil, argv, envp)
        guard result == 0 else { return (0, result) }
        return (spawned, 0)
    }

    /// Whether the child has not exited yet.
    public var isRunning: Bool { state.withLock { !$0.exiting } }

    /// How the child ended, nil while it runs (or is being reaped).
    public var termination: Termination? { state.withLock { $0.termination } }

    /// The exit code (or the killing signal), -1 while the child runs.
    public var terminationStatus: Int32 { termination?.status ?? -1 }

    /// Whether the child exited or was killed by a signal (`.exit` while it runs).
    public var terminationReason: Process.TerminationReason { termination?.reason ?? .exit }

    /// Sends `signal` to the child unless it has exited (never to a pid that may since be reused).
    public func signal(_ signal: Int32) {
        state.withLock { state in
            if !state.exiting { kill(processIdentifier, signal) }
        }
    }

    /// Waits for the child to exit and be reaped.
    public func exit() async -> Termination {
        await withCheckedContinuation { continuation in
            let known = state.withLock { state -> Termination? in
                if let termination = state.termination { return termination }
                state.waiters.append(continuation)
                return nil
            }
            if let known { continuation.resume(returning: known) }
        }
    }

    /// Runs `executable` with `arguments` to its end with its stdout and stderr together, killing it past
    /// `deadline` (then the termination is nil; the deadline also bounds the wait for the output's end).
    public static func run(
        _ executable: URL, _ arguments: [String], directory: URL? = nil, environment: [String: String]? = nil,
        deadline: Duration = .seconds(90)
    ) async throws -> (termination: Termination?, output: String) {
        let pipe = try ChildPipe()
        let output = Mutex(Data())
        let drained = ExitLatch()
        PipeDrain.start(reading: pipe.reading, onData: { data in output.withLock { $0.append(data) } }, onEnd: { drained.open() })
        let child: ChildProcess
        do {
            child = try ChildProcess(
                executable: executable, arguments: arguments, directory: directory, environment: environment,
                standardOutput: pipe.writing.fileDescriptor, standardError: pipe.writing.fileDescriptor)
        } catch {
            try? pipe.writing.close()
            throw error
        }
        try? pipe.writing.close()
        let expired = Mutex(false)
        let killer = Task {
            try? await Task.sleep(for: deadline)
            guard !Task.isCancelled else { return }
            expired.withLock { $0 = true }
            child.signal(SIGKILL)
            // A grandchild may still hold the output pipe: stop waiting for its end of file too.
            drained.open()
        }
        let termination = await child.exit()
        await drained.wait()
        killer.cancel()
        let text = String(decoding: output.withLock { $0 }, as: UTF8.self)
        return (expired.withLock { $0 } ? nil : termination, text)
    }
}

/// A pipe whose two ends are close-on-exec from the start (`pipe2`), so no child started meanwhile by
/// another thread inherits them; a child gets an end only as one of its standard descriptors.
public struct ChildPipe: Sendable {
    /// The end the parent reads.
    public let reading: FileHandle
    /// The end handed to the child; the parent closes its copy once the child started.
    public let writing: FileHandle

    /// Opens the pipe. Throws `POSIXError` when the process is out of descriptors (`ENOSYS` without `pipe2`).
    public init() throws {
        var fds: [Int32] = [0, 0]
        guard let pipe2 = SpawnActions.pipe2 else { throw POSIXError(.ENOSYS) }
        guard pipe2(&fds, O_CLOEXEC) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        reading = FileHandle(fileDescriptor: fds[0], closeOnDealloc: false)
        writing = FileHandle(fileDescriptor: fds[1], closeOnDealloc: false)
    }
}

/// A one-shot gate: `wait` returns once `open` was called (before or after).
package final class ExitLatch: Sendable {
    private let state = Mutex<(open: Bool, waiters: [CheckedContinuation<Void, Never>])>((false, []))

    package init() {}

    package func open() {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.open = true
            defer { state.waiters.removeAll() }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }

    package func wait() async {
        await withCheckedContinuation { continuation in
            let open = state.withLock { state -> Bool in
                if state.open { return true }
                state.waiters.append(continuation)
                return false
            }
            if open { continuation.resume() }
        }
    }
}

/// glibc's spawn file actions Swift's Glibc module does not show (found at run time).
enum SpawnActions {
    typealias CloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
    typealias ChangeDirectory = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, UnsafePointer<CChar>) -> Int32

    /// `posix_spawn_file_actions_addclosefrom_np` (glibc 2.34): closes every descriptor from `lowest` up;
    /// nil on an older C library (spawning then fails with `ENOSYS`).
    static let closeFrom: CloseFrom? = symbol("posix_spawn_file_actions_addclosefrom_np", as: CloseFrom.self)

    typealias Pipe2 = @convention(c) (UnsafeMutablePointer<Int32>, Int32) -> Int32

    /// `pipe2`: a pipe whose ends have `flags` (`O_CLOEXEC`) from the start; nil without one.
    static let pipe2: Pipe2? = symbol("pipe2", as: Pipe2.self)

    /// `posix_spawn_file_actions_addchdir_np` (glibc 2.29): the child's working directory; nil on an older
    /// C library.
    static let changeDirectory: ChangeDirectory? = symbol("posix_spawn_file_actions_addchdir_np", as: ChangeDirectory.self)

    /// The C library's function `name`, as `type`, or nil when it has none.
    private static func symbol<F>(_ name: String, as type: F.Type) -> F? {
        dlsym(UnsafeMutableRawPointer(bitPattern: 0), name).map { unsafeBitCast($0, to: type) }
    }
}

/// The one thread that starts every child of this process (`ChildProcess`), alive as long as the process.
///
/// A node started by the kit asks the kernel to kill it when its parent dies (`PR_SET_PDEATHSIG`, see
/// `NodeProcess.parentVariable`), and Linux sends that signal when the *thread* that started the child
/// ends, not the process. Swift's pool threads come and go; this one never ends, so the signal comes
/// only with the test process itself.
final class SpawnThread: Sendable {
    /// The thread every child is started from.
    static let shared = SpawnThread()

    private let jobs = Mutex<[@Sendable () -> Void]>([])
    private let wake = DispatchSemaphore(value: 0)

    private init() {
        let thread = Thread { [self] in
            while true {
                wake.wait()
                let next = jobs.withLock { $0.isEmpty ? nil : $0.removeFirst() }
                next?()
            }
        }
        thread.name = "child-spawner"
        thread.start()
    }

    /// Runs `body` on the spawning thread and returns its result (the caller blocks meanwhile: a spawn
    /// takes a fraction of a millisecond).
    func run<T: Sendable>(_ body: @escaping @Sendable () -> T) -> T {
        let result = Outcome<T>()
        let done = DispatchSemaphore(value: 0)
        jobs.withLock { $0.append { result.value.withLock { $0 = body() }; done.signal() } }
        wake.signal()
        done.wait()
        return result.value.withLock { $0! }
    }

    /// Where the spawning thread leaves a job's result for its caller.
    private final class Outcome<T: Sendable>: Sendable {
        let value = Mutex<T?>(nil)
    }
}
