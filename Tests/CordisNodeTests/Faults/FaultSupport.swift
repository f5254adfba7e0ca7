import CordisNode
import CordisProcessTesting
import Foundation
import Synchronization
import Testing

/// One console call of a fault test: its answer (the counter's new value) or its error code, and how
/// long it took.
struct CallRecord: Sendable {
    var value: Int?
    var code: String?
    var message: String?
    var took: Duration
}

/// Calls `counter.add 1` through one console, one call after another (each awaiting the previous
/// answer), until `stop()`; every outcome is recorded.
final class ContinuousCaller: Sendable {
    private struct State {
        var records: [CallRecord] = []
        var successes = 0
        var waiters: [(id: Int, successes: Int, continuation: CheckedContinuation<Bool, Never>)] = []
        var nextWaiter = 0
        var stopped = false
    }

    private let state = Mutex(State())
    private let task = Mutex<Task<Void, Never>?>(nil)
    /// How long one call may take before the console gives up (a `client: …` record).
    let timeout: Duration

    init(console: ControlClient, timeout: Duration = .seconds(10), maxCalls: Int = 100_000) {
        self.timeout = timeout
        let started = Task { [self] in
            var calls = 0
            while !state.withLock({ $0.stopped }), calls < maxCalls {
                calls += 1
                let start = ContinuousClock.now
                var record = CallRecord(took: .zero)
                do {
                    let value = try await console.request(
                        .call, args: ["service": "counter", "method": "add", "args": .object(["_0": .integer(1)])],
                        timeout: timeout)
                    record.value = value.intValue
                    if record.value == nil { record.code = "not-an-integer" }
                } catch let failure as ControlFailure {
                    record.code = failure.code
                    record.message = failure.message
                } catch {
                    record.code = "client: \(error)"
                }
                record.took = ContinuousClock.now - start
                self.append(record)
                // A console link that closed fails every call at once: no point in spinning on it.
                if record.code?.hasPrefix("client") == true { break }
            }
            self.finish()
        }
        task.withLock { $0 = started }
    }

    private func append(_ record: CallRecord) {
        let ready = state.withLock { state -> [CheckedContinuation<Bool, Never>] in
            state.records.append(record)
            if record.value != nil { state.successes += 1 }
            let successes = state.successes
            let ready = state.waiters.filter { $0.successes <= successes }.map(\.continuation)
            state.waiters.removeAll { $0.successes <= successes }
            return ready
        }
        for waiter in ready { waiter.resume(returning: true) }
    }

    private func finish() {
        let waiters = state.withLock { state -> [CheckedContinuation<Bool, Never>] in
            state.stopped = true
            defer { state.waiters.removeAll() }
            return state.waiters.map(\.continuation)
        }
        for waiter in waiters { waiter.resume(returning: false) }
    }

    /// Everything recorded so far.
    var all: [CallRecord] { state.withLock { $0.records } }

    /// How many calls succeeded so far.
    var successes: Int { state.withLock { $0.successes } }

    /// Waits until `count` calls in all succeeded (at most `timeout`); false when they did not.
    func awaitSuccesses(_ count: Int, timeout: Duration = .seconds(20)) async -> Bool {
        let id = state.withLock { state -> Int in
            state.nextWaiter += 1
            return state.nextWaiter
        }
        let timer = Task { [self] in
            try? await Task.sleep(for: timeout)
            let expired = state.withLock { state -> CheckedContinuation<Bool, Never>? in
                guard let index = state.waiters.firstIndex(where: { $0.id == id }) else { return nil }
                return state.waiters.remove(at: index).continuation
            }
            expired?.resume(returning: false)
        }
        defer { timer.cancel() }
        return await withCheckedContinuation { continuation in
            let answer = state.withLock { state -> Bool? in
                if state.successes >= count { return true }
                if state.stopped { return false }
                state.waiters.append((id, count, continuation))
                return nil
            }
            if let answer { continuation.resume(returning: answer) }
        }
    }

    /// Stops after the call under way and returns every record.
    func stop() async -> [CallRecord] {
        state.withLock { $0.stopped = true }
        await task.withLock({ $0 })?.value
        return all
    }
}

/// What a process holds: resident memory and open descriptors, from `/proc`.
struct ProcessUsage: Sendable, CustomStringConvertible {
    var residentKiB: Int
    var descriptors: Int

    init?(pid: Int32) {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
              let kib = line.split(whereSeparator: { $0 == " " || $0 == "\t" }).dropFirst().first.flatMap({ Int($0) }),
              let fds = try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd")
        else { return nil }
        residentKiB = kib
        descriptors = fds.count
    }

    var description: String { "\(residentKiB) KiB resident, \(descriptors) descriptors" }
}

extension ClusterMember {
    /// The member's resident memory and descriptors now.
    var usage: ProcessUsage? { ProcessUsage(pid: process.process.processIdentifier) }

    /// The member's usage once it satisfies `condition`, or the last one read when `timeout` passed
    /// first (nil when the process is gone). A node closes some descriptors on its own schedule (a
    /// duplicate link drains until its calls end, a dial that lost the race ends its handshake), so a
    /// count read at one instant may hold one of them; one that stays past the deadline was left
    /// behind. `/proc` tells no one of changes: it is read again every 50 ms.
    func awaitUsage(timeout: Duration = .seconds(30), _ condition: (ProcessUsage) -> Bool) async -> ProcessUsage? {
        let deadline = ContinuousClock.now + timeout
        var current = usage
        while let read = current, !condition(read), ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(50))
            current = usage
        }
        return current
    }
}
