import Synchronization
import Testing
@testable import Cordis

/// An ordered record of what tests' plugins did.
@CordisActor
final class Trail {
    private(set) var entries: [String] = []
    func add(_ entry: String) { entries.append(entry) }
    func count(_ entry: String) -> Int { entries.filter { $0 == entry }.count }
    func reset() { entries.removeAll() }
}

/// A call counter.
@CordisActor
final class Counter {
    private(set) var value = 0
    func hit() { value += 1 }
    func reset() { value = 0 }
}

/// A gate a test opens by hand: code awaiting `pass()` blocks until `open()`; the test can await
/// `reached(n)` to know that code has arrived at the gate `n` times in total.
@CordisActor
final class Gate {
    private var isOpen = false
    private var waiters: [CheckedContinuation<Void, Never>] = []
    private var arrivals = 0
    private var arrivalWaiters: [(Int, CheckedContinuation<Void, Never>)] = []

    /// Waits until the gate is open (returns at once if it is).
    func pass() async {
        arrivals += 1
        let ready = arrivalWaiters.filter { $0.0 <= arrivals }
        arrivalWaiters.removeAll { $0.0 <= arrivals }
        for (_, waiter) in ready { waiter.resume() }
        guard !isOpen else { return }
        await withCheckedContinuation { waiters.append($0) }
    }

    /// Opens the gate: releases every waiter and lets later ones through.
    func open() {
        isOpen = true
        let released = waiters
        waiters.removeAll()
        for waiter in released { waiter.resume() }
    }

    /// Releases the current waiters only; the gate stays closed for later ones.
    func releaseOnce() {
        let released = waiters
        waiters.removeAll()
        for waiter in released { waiter.resume() }
    }

    /// Closes the gate again.
    func close() { isOpen = false }

    /// Waits until `pass()` has been called `count` times in total.
    func reached(_ count: Int = 1) async {
        guard arrivals < count else { return }
        await withCheckedContinuation { arrivalWaiters.append((count, $0)) }
    }

    /// How many times `pass()` was called.
    var arrivalCount: Int { arrivals }
}

/// A log exporter keeping every record, for assertions.
final class CapturedLogs: LogSink {
    let level: LogLevel
    private let records = Mutex<[LogMessage]>([])

    init(level: LogLevel = .debug) {
        self.level = level
    }

    func export(_ record: LogMessage) {
        records.withLock { $0.append(record) }
    }

    var all: [LogMessage] { records.withLock { $0 } }
    func at(_ level: LogLevel) -> [LogMessage] { all.filter { $0.level == level } }
    var names: [String] { all.map(\.name) }
}

/// A root context whose logs are captured (and not printed).
@CordisActor
func makeRoot() throws -> (Context, CapturedLogs) {
    let root = Context()
    let logs = CapturedLogs()
    try root.logger.exporter(logs)
    return (root, logs)
}

/// Yields until `condition` holds, at most `limit` times; returns whether it held.
@CordisActor
@discardableResult
func eventually(limit: Int = 10_000, _ condition: @CordisActor () -> Bool) async -> Bool {
    for _ in 0..<limit {
        if condition() { return true }
        await Task.yield()
    }
    return condition()
}

/// A simple value served under the keys below.
@CordisActor
final class Box {
    var value: Int
    init(_ value: Int) { self.value = value }
}

enum FooKey: ServiceKey {
    typealias Value = Box
    static let name = "foo"
}

enum BarKey: ServiceKey {
    typealias Value = Box
    static let name = "bar"
}

enum QuxKey: ServiceKey {
    typealias Value = Box
    static let name = "qux"
}

/// `custom-event`, as in cordis's specs.
enum CustomEvent: EventKey {
    typealias Args = Void
    static var name: String { "custom-event" }
}
