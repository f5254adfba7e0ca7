import Foundation

/// Runs `body`, a blocking wait (`poll`, `recv`, a blocking socket loop), on a thread of its own and
/// returns what it returns.
///
/// Swift's cooperative pool has one thread per core (two on the test machines): a test that blocks one
/// of them in a system call for seconds halves the pool for every other test running at the same time,
/// and two such tests stop all of them, so in-process handshakes and timers miss their deadlines.
/// Blocking waits therefore never run on the pool.
public func onOwnThread<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { (continuation: CheckedContinuation<T, Never>) in
        let thread = Thread { continuation.resume(returning: body()) }
        thread.start()
    }
}
