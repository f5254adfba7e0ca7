import CordisWire
import Synchronization
import Testing

/// Scheduling a timer wakes a blocked loop only when the new deadline is earlier than the one it
/// sleeps to: a remote call arms a timeout on every call, and a loop woken for each would pay a
/// wake-up (and, across CPUs, a halted CPU's) per call.
@Suite("Event loop wake-ups")
struct EventLoopWakeupTests {
    @Test("Timers later than the loop's next deadline are armed without waking it; an earlier one still fires on time")
    func laterTimersDoNotWakeTheLoop() async throws {
        let loop = try EventLoop()
        defer { Task { await loop.shutdown() } }
        let first = loop.schedule(after: .seconds(60)) {}
        // A round trip through the loop: it has seen the first timer and goes back to sleep until it.
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in loop.execute { continuation.resume() } }
        let before = loop.wakeups
        var later: [UInt64] = []
        for index in 0..<100 { later.append(loop.schedule(after: .seconds(120 + index)) {}) }
        #expect(loop.wakeups == before)
        let fired = Mutex(false)
        try await withDeadline("an earlier timer fires", 10) {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                loop.schedule(after: .milliseconds(20)) {
                    fired.withLock { $0 = true }
                    continuation.resume()
                }
            }
        }
        #expect(fired.withLock { $0 })
        loop.cancelTimer(first)
        for id in later { loop.cancelTimer(id) }
    }
}
