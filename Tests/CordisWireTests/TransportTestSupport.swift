import CordisWire
import Dispatch
import Foundation
import Synchronization
import Testing

extension ConnectionLimits {
    /// These bounds without the handshake deadline, for a test about something else: with the
    /// deadline, the steps between the accept and `markEstablished()` (each a job on the shared
    /// concurrency pool, behind every other test's jobs) would race a wall clock.
    var withoutHandshakeDeadline: ConnectionLimits {
        var limits = self
        limits.handshakeTimeout = nil
        return limits
    }
}

/// A test that passed its deadline.
struct DeadlineExceeded: Error, CustomStringConvertible {
    var what: String
    var description: String { "deadline exceeded: \(what)" }
}

/// Runs `body` and fails with `DeadlineExceeded` if it has not finished within `seconds`.
func withDeadline<T: Sendable>(
    _ what: String, _ seconds: Double = 10, _ body: @escaping @Sendable () async throws -> T
) async throws -> T {
    let slot = Mutex<CheckedContinuation<T, any Error>?>(nil)
    return try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
        slot.withLock { $0 = continuation }
        let finish: @Sendable (Result<T, any Error>) -> Void = { outcome in
            let taken = slot.withLock { held in
                defer { held = nil }
                return held
            }
            taken?.resume(with: outcome)
        }
        let task = Task {
            do { finish(.success(try await body())) } catch { finish(.failure(error)) }
        }
        DispatchQueue.global().asyncAfter(deadline: .now() + seconds) {
            finish(.failure(DeadlineExceeded(what: what)))
            task.cancel()
        }
    }
}

/// Records transport events for assertions, and lets a test await one of a kind.
final class EventRecorder: Sendable {
    private let events = Mutex<[TransportEvent]>([])
    private let waiters = Mutex<[(TransportEvent.Kind, CheckedContinuation<TransportEvent, Never>)]>([])

    var observer: @Sendable (TransportEvent) -> Void {
        { [self] event in record(event) }
    }

    func record(_ event: TransportEvent) {
        events.withLock { $0.append(event) }
        let ready = waiters.withLock { waiters in
            let ready = waiters.filter { $0.0 == event.kind }
            waiters.removeAll { $0.0 == event.kind }
            return ready
        }
        for (_, continuation) in ready { continuation.resume(returning: event) }
    }

    var all: [TransportEvent] { events.withLock { $0 } }

    /// The first event of `kind`, waiting for it if needed.
    func first(_ kind: TransportEvent.Kind) async -> TransportEvent {
        await withCheckedContinuation { continuation in
            let found = events.withLock { events in events.first { $0.kind == kind } }
            if let found {
                continuation.resume(returning: found)
                return
            }
            waiters.withLock { $0.append((kind, continuation)) }
            // An event recorded between the check and the registration.
            if let late = events.withLock({ events in events.first { $0.kind == kind } }) {
                let mine = waiters.withLock { waiters -> Bool in
                    guard let index = waiters.firstIndex(where: { $0.0 == kind }) else { return false }
                    waiters.remove(at: index)
                    return true
                }
                if mine { continuation.resume(returning: late) }
            }
        }
    }
}

/// A fresh short temporary folder for Unix sockets (paths must stay under 108 bytes).
func temporaryFolder() throws -> String {
    var template = Array("/tmp/cw-XXXXXX".utf8CString)
    let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
    let path = try #require(made.map { String(cString: $0) })
    return path
}

func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

func text(_ bytes: [UInt8]?) -> String? { bytes.map { String(decoding: $0, as: UTF8.self) } }

/// Takes the next admitted connection of a listener.
func accept(_ listener: Listener) async throws -> Connection {
    var iterator = listener.connections.makeAsyncIterator()
    return try #require(await iterator.next())
}

/// The next inbound payload of a connection.
func nextFrame(_ connection: Connection) async throws -> [UInt8]? {
    var iterator = connection.frames.makeAsyncIterator()
    return try await iterator.next()
}

/// The next connection a listener admitted, or nil when it closed.
func nextConnection(_ listener: Listener) async -> Connection? {
    var iterator = listener.connections.makeAsyncIterator()
    return await iterator.next()
}

/// A child process forked from the test process: it holds a copy of every descriptor open at the fork
/// (as a process another thread spawns does until its exec) until `release()` lets it exit.
final class ForkedDescriptorHolder {
    private let child: pid_t
    private let releaseEnd: Int32

    /// Forks the child, or throws when the system cannot.
    init() throws {
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else { throw TransportError(.systemError, "pipe failed", errno: errno) }
        let child = fork()
        if child == 0 {
            // Only async-signal-safe calls in the child: it waits for a byte, then exits.
            close(ends[1])
            var byte: UInt8 = 0
            _ = read(ends[0], &byte, 1)
            _exit(0)
        }
        close(ends[0])
        guard child > 0 else {
            close(ends[1])
            throw TransportError(.systemError, "fork failed", errno: errno)
        }
        self.child = child
        self.releaseEnd = ends[1]
    }

    /// Lets the child exit and reaps it. The child is told by a byte, not by the pipe's end: another
    /// holder forked meanwhile keeps a copy of the writing end open.
    func release() {
        var byte: UInt8 = 1
        while write(releaseEnd, &byte, 1) < 0 && errno == EINTR {}
        close(releaseEnd)
        var status: Int32 = 0
        while waitpid(child, &status, 0) < 0 && errno == EINTR {}
    }
}
