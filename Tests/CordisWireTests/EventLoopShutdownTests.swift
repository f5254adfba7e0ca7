import CordisWire
import Foundation
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// How many threads marked with `threadEndKey` have run its destructor, that is, finished their
/// thread-exit work.
private let endedThreads = Atomic<Int>(0)

/// A thread-specific key whose destructor counts the ends of the threads that set it.
private let threadEndKey: pthread_key_t = {
    var key = pthread_key_t()
    let created = pthread_key_create(&key) { _ in endedThreads.add(1, ordering: .sequentiallyConsistent) }
    precondition(created == 0, "pthread_key_create failed")
    return key
}()

/// `shutdown()` returns once the loop's threads have ended, their thread-exit work done: a program that
/// exits right after it (the console) must not run its exit handlers (OpenSSL's cleanup, libraries'
/// destructors) while a loop thread still runs its own.
@Suite("Event loop shutdown", .serialized)
struct EventLoopShutdownTests {
    @Test("When shutdown returns, every thread of the loop has ended, the standby that took a held loop over included")
    func shutdownWaitsForTheThreads() async throws {
        for round in 0..<40 {
            // A short takeover bound and a task job that holds the loop: a standby thread takes over.
            let loop = try EventLoop(name: "loop-end-test", takeover: .milliseconds(5))
            let marked = Mutex(Set<UInt>())
            let mark: @Sendable () -> Void = {
                pthread_setspecific(threadEndKey, UnsafeRawPointer(bitPattern: 1))
                _ = marked.withLock { $0.insert(UInt(pthread_self())) }
            }
            let before = endedThreads.load(ordering: .sequentiallyConsistent)
            await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in loop.execute { mark(); done.resume() } }
            let gate = ThreadGate()
            await gate.awaitEntered { Task(executorPreference: loop) { gate.block() } }
            // The driver is held: this job runs only once the standby has taken the loop over.
            await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in loop.execute { mark(); done.resume() } }
            gate.open()
            await loop.shutdown()
            let ended = endedThreads.load(ordering: .sequentiallyConsistent) - before
            let threads = marked.withLock { $0.count }
            #expect(ended == threads, "round \(round): \(threads) loop threads ran, \(ended) had ended when shutdown returned")
            if ended != threads { break }
        }
    }

    @Test("A loop thread held in a job that never returns does not hold shutdown for ever: it is waited for 2 s, then let go")
    func shutdownLetsAHeldThreadGo() async throws {
        let loop = try EventLoop(name: "loop-held-test", takeover: .milliseconds(5))
        let gate = ThreadGate()
        defer { gate.open() }
        // The job holds the thread it runs on; the standby takes the loop over and stops it at shutdown.
        await gate.awaitEntered { Task(executorPreference: loop) { gate.block() } }
        let started = ContinuousClock.now
        try await withDeadline("shutdown returns while a loop thread is still held", 20) { await loop.shutdown() }
        let waited = ContinuousClock.now - started
        #expect(waited >= .milliseconds(1_900), "shutdown returned after \(waited), before the held thread's 2 s")
        #expect(gate.isClosed, "the job was still holding its thread when shutdown returned")
    }
}
