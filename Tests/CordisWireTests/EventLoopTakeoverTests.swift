import CordisWire
import Dispatch
import Synchronization
import Testing

/// A gate that a task's job blocks its thread on until the test opens it (the stand-in for a plugin
/// that keeps its thread busy).
final class ThreadGate: Sendable {
    private let semaphore = DispatchSemaphore(value: 0)
    private let entered = Mutex<CheckedContinuation<Void, Never>?>(nil)
    private let opened = Mutex(false)

    /// Blocks the calling thread until `open()`; resumes `entered` first.
    func block() {
        entered.withLock { $0.take() }?.resume()
        semaphore.wait()
    }

    /// Runs `start`, which must start the job that calls `block()`, and returns once it is blocked.
    func awaitEntered(_ start: @Sendable () -> Void) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            entered.withLock { $0 = continuation }
            start()
        }
    }

    /// True until `open()` is called.
    var isClosed: Bool { !opened.withLock { $0 } }

    /// Lets the blocked job go on; idempotent.
    func open() {
        let first = opened.withLock { opened -> Bool in
            defer { opened = true }
            return !opened
        }
        if first { semaphore.signal() }
    }
}

/// A task that prefers the loop as its executor runs on the loop thread; when such a job keeps the
/// thread longer than the loop's takeover bound (a plugin blocking `CordisActor`), another thread takes
/// over the loop, so sockets, heartbeat answers and timers go on.
@Suite("Event loop takeover")
struct EventLoopTakeoverTests {
    @Test("A task that prefers a loop goes on after the loop stopped: its jobs run on the default executor, and so does an actor it holds")
    func taskPreferringAStoppedLoopGoesOn() async throws {
        let loop = try EventLoop()
        // The task's continuation, and the test's while it waits for the task to suspend: one lock.
        let meeting = Mutex<(task: CheckedContinuation<Void, Never>?, test: CheckedContinuation<Void, Never>?)>((nil, nil))
        let task = Task(executorPreference: loop) { () async -> Int in
            await withCheckedContinuation { continuation in
                meeting.withLock { meeting in
                    meeting.task = continuation
                    defer { meeting.test = nil }
                    return meeting.test
                }?.resume()
            }
            // Runs where the loop would have run it; then an actor's code, scheduled on the same
            // preference, and back.
            return await LoopStopProbe.shared.bump()
        }
        try await withDeadline("the task suspends") {
            await withCheckedContinuation { continuation in
                let suspended = meeting.withLock { meeting -> Bool in
                    if meeting.task != nil { return true }
                    meeting.test = continuation
                    return false
                }
                if suspended { continuation.resume() }
            }
        }
        await loop.shutdown()
        meeting.withLock { meeting in
            defer { meeting.task = nil }
            return meeting.task
        }?.resume()
        let value = try await withDeadline("the task preferring the stopped loop ends") { await task.value }
        #expect(value == 1)
        #expect(try await withDeadline("the actor still runs for others") { await LoopStopProbe.shared.bump() } == 2)
    }

    @Test("A task job that blocks the loop thread does not stop the loop: pings are answered and timers fire until it returns")
    func blockedTaskJobDoesNotStopTheLoop() async throws {
        let loop = try EventLoop()
        let peerLoop = try EventLoop()
        let gate = ThreadGate()
        defer {
            gate.open()
            Task {
                await loop.shutdown()
                await peerLoop.shutdown()
            }
        }
        let unbounded = ConnectionLimits().withoutHandshakeDeadline
        let listener = try loop.listen(on: .unix(path: try temporaryFolder() + "/t.sock"), options: ListenerOptions(limits: unbounded))
        let client = try await peerLoop.connect(to: listener.address, limits: unbounded)
        let server = try await withDeadline("accept") { try await accept(listener) }
        client.markEstablished()
        server.markEstablished()
        server.setFilter { payload in payload == bytes("ping") ? .reply(bytes("pong")) : .deliver(payload) }

        let blocker = Mutex<Task<Void, Never>?>(nil)
        await gate.awaitEntered {
            blocker.withLock { $0 = Task(executorPreference: loop) { gate.block() } }
        }
        // The loop's own thread is now blocked in the task's job.
        try await client.send(bytes("ping"))
        let answer = try await withDeadline("pong while the loop thread is blocked") { try await nextFrame(client) }
        #expect(text(answer) == "pong")
        try await withDeadline("a timer while the loop thread is blocked") {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                loop.schedule(after: .milliseconds(1)) { continuation.resume() }
            }
        }
        gate.open()
        await blocker.withLock { $0 }?.value
        // After the job returned, the loop still runs tasks and frames.
        let onLoop = try await withDeadline("a task on the loop after the block") {
            await Task(executorPreference: loop) { loop.inLoopThread }.value
        }
        #expect(onLoop == false, "a task's job never counts as the loop's own code")
        try await client.send(bytes("data"))
        let delivered = try await withDeadline("data after the block") { try await nextFrame(server) }
        #expect(text(delivered) == "data")
    }
}

/// An actor the stopped-loop test calls from a task that prefers the loop.
private actor LoopStopProbe {
    static let shared = LoopStopProbe()
    private var count = 0

    func bump() -> Int {
        count += 1
        return count
    }
}
