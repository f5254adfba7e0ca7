import CordisWire
import Foundation
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#endif

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

    @Test("A stopped loop writes no wake-up into a file that took the number of its closed descriptors")
    func stoppedLoopTouchesNoOtherFile() async throws {
        let loop = try EventLoop()
        await loop.shutdown()
        // The lowest free numbers are the ones the loop just closed: new files get them.
        let folder = try temporaryFolder()
        let files = (0..<4).map { folder + "/file-\($0)" }
        let descriptors = files.map { open($0, O_CREAT | O_RDWR | O_TRUNC, 0o600) }
        defer { for fd in descriptors where fd >= 0 { close(fd) } }
        #expect(descriptors.allSatisfy { $0 >= 0 })
        for _ in 0..<3 {
            loop.execute {}
            _ = loop.schedule(after: .milliseconds(1)) {}
        }
        for file in files {
            let size = (try FileManager.default.attributesOfItem(atPath: file)[.size] as? NSNumber)?.intValue
            #expect(size == 0, "\(file) holds \(size ?? -1) bytes written by a stopped loop")
        }
    }
}
