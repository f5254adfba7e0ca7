import Cordis
import Foundation
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Ports cordis-ios's `Tests/CordisTests/DemoTests.swift`: the demo program (here the `cordis-ios-demo`
/// executable, `Examples/CordisIOSDemo`) runs a Loader over an entries file in cordis-ios's format and
/// prints each entry's state after starting, after disabling `clock` and after enabling it again.
///
/// cordis-ios calls the demo in-process with its output captured; here the built program runs as a
/// child process on a temporary copy of cordis-ios's entries file, with a deadline.
@Suite("DemoTests")
struct DemoTests {
    /// Ports cordis-ios DemoTests "demo prints the state tables".
    @Test("demo prints the state tables")
    func theDemoPrintsEachEntrysStateAfterEveryStep() async throws {
        let program = DemoProgram.executable
        try #require(
            FileManager.default.isExecutableFile(atPath: program.path),
            "\(program.path) is not built (swift build --product cordis-ios-demo)")
        let folder = FileManager.default.temporaryDirectory
            .appendingPathComponent("cordis-ios-demo-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let entries = folder.appendingPathComponent("entries.json")
        try Self.cordisIOSEntries().write(to: entries)

        let run = try await DemoProgram.run([entries.path], deadline: .seconds(60))
        #expect(!run.timedOut, "the demo did not end within 60 s; it printed:\n\(run.stdout)\(run.stderr)")
        #expect(run.status == 0, "stderr: \(run.stderr)")
        let lines = run.stdout.split(separator: "\n").map(String.init)

        let tables = lines.filter { !$0.hasPrefix("greeter:") && !$0.hasPrefix("[") }
        #expect(tables == [
            "clock    active",
            "greeter  active",
            "noisy    failed",
            "--- disable clock",
            "clock    disposed",
            "greeter  pending",
            "noisy    failed",
            "--- enable clock",
            "clock    active",
            "greeter  active",
            "noisy    failed",
        ])
        #expect(lines.filter { $0.hasPrefix("greeter: active at ") }.count == 2)
        #expect(lines.filter { $0 == "greeter: disposed" }.count == 1)
        #expect(lines.filter { $0.hasPrefix("[error]") } == ["[error] NoisyPlugin: DemoError: noisy plugin refused to start"])

        let saved = try Self.savedEntries(at: entries)
        #expect(saved.map(\.disabled) == [false, false, false])
    }

    /// cordis-ios's bundled `entries.json`: a bare array of three entries.
    private static func cordisIOSEntries() throws -> Data {
        let entries: [[String: Any]] = [
            ["id": "clock", "plugin": "clock"],
            ["id": "greeter", "plugin": "greeter", "config": ["name": "Ovidiu"]],
            ["id": "noisy", "plugin": "noisy"],
        ]
        return try JSONSerialization.data(withJSONObject: entries)
    }

    /// The entries the demo's Loader saved, read as cordis-ios's test reads them: the file began as a
    /// bare array of entries, and the store keeps that form.
    private static func savedEntries(at url: URL) throws -> [Entry] {
        try JSONDecoder().decode([Entry].self, from: Data(contentsOf: url))
    }
}

/// The built `cordis-ios-demo`, run as a child process.
private enum DemoProgram {
    /// The demo's executable, built next to the test bundle.
    static var executable: URL { productsDirectory.appendingPathComponent("cordis-ios-demo") }

    /// The folder the package's products are built into (`.build/debug`): the test bundle's own.
    static var productsDirectory: URL {
        #if os(Linux)
        return URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
        #else
        if let tests = Bundle.allBundles.first(where: { $0.bundlePath.hasSuffix(".xctest") }) {
            return tests.bundleURL.deletingLastPathComponent()
        }
        return Bundle.main.bundleURL
        #endif
    }

    /// Runs the demo with `arguments` to its end, draining its output while it runs; past `deadline` it
    /// is killed (by its pid) and the run is reported as timed out with what it printed so far.
    static func run(_ arguments: [String], deadline: Duration) async throws -> Run {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        process.standardInput = FileHandle.nullDevice
        let stdout = Pipe()
        let stderr = Pipe()
        process.standardOutput = stdout
        process.standardError = stderr
        let exited = Latch()
        process.terminationHandler = { _ in exited.open() }
        // `run()` closes the parent's copies of the pipes' write ends, so each pipe ends with the program.
        try process.run()
        let output = Drain(stdout.fileHandleForReading)
        let errors = Drain(stderr.fileHandleForReading)

        let finished = Latch()
        let timedOut = Latch()
        let pid = process.processIdentifier
        Task {
            await exited.wait()
            await output.ended.wait()
            await errors.ended.wait()
            finished.open()
        }
        let killer = Task {
            try? await Task.sleep(for: deadline)
            guard !Task.isCancelled, !finished.isOpen else { return }
            timedOut.open()
            if !exited.isOpen { kill(pid, SIGKILL) }
            finished.open()
        }
        await finished.wait()
        killer.cancel()
        return Run(
            status: exited.isOpen ? process.terminationStatus : nil, timedOut: timedOut.isOpen,
            stdout: output.text, stderr: errors.text)
    }

    /// How a run ended and what it printed.
    struct Run {
        /// The exit status, nil when the program had not exited at the deadline.
        var status: Int32?
        /// Whether the deadline passed first.
        var timedOut: Bool
        var stdout: String
        var stderr: String
    }
}

/// Reads a pipe until its end on a thread of its own, keeping what it read.
private final class Drain: Sendable {
    /// Opened at the pipe's end of file.
    let ended = Latch()
    private let data = Mutex(Data())

    init(_ handle: FileHandle) {
        let thread = Thread { [self] in
            // Bounded by the pipe: a read returns nothing (or fails) only at its end.
            while let chunk = try? handle.read(upToCount: 64 * 1024), !chunk.isEmpty {
                data.withLock { $0.append(chunk) }
            }
            try? handle.close()
            ended.open()
        }
        thread.name = "demo-output"
        thread.start()
    }

    /// What was read so far, as text.
    var text: String { String(decoding: data.withLock { $0 }, as: UTF8.self) }
}

/// A one-way gate: `wait()` returns once `open()` has been called, before or after.
private final class Latch: Sendable {
    private let state = Mutex<(isOpen: Bool, waiters: [CheckedContinuation<Void, Never>])>((false, []))

    var isOpen: Bool { state.withLock { $0.isOpen } }

    func open() {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.isOpen = true
            defer { state.waiters.removeAll() }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }

    func wait() async {
        await withCheckedContinuation { continuation in
            let openAlready = state.withLock { state -> Bool in
                if state.isOpen { return true }
                state.waiters.append(continuation)
                return false
            }
            if openAlready { continuation.resume() }
        }
    }
}
