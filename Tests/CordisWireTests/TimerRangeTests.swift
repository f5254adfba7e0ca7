import CordisWire
import Synchronization
import Testing

/// Timers whose delay comes from a peer (a relayed request's timeout, a call timeout) can be absurdly
/// long: the loop must keep running and fire the timers that are due.
@Suite("Event loop timers far in the future")
struct TimerRangeTests {
    @Test("A timer due in billions of years leaves the loop running its other timers", arguments: [
        Duration.seconds(Int64.max), Duration.seconds(Int64.max / 1000 + 1), Duration.seconds(1 << 62),
        Duration(secondsComponent: Int64.max, attosecondsComponent: 999_999_999_999_999_999),
    ])
    func farTimerLeavesTheLoopRunning(delay: Duration) async throws {
        let loop = try EventLoop()
        let far = loop.schedule(after: delay) {}
        let fired = try await withDeadline("a short timer after a far one") {
            await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
                loop.schedule(after: .milliseconds(10)) { continuation.resume(returning: true) }
            }
        }
        #expect(fired)
        loop.cancelTimer(far)
        await loop.shutdown()
    }
}
