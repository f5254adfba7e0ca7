@testable import CordisWire
import Foundation
import Synchronization
import Testing

/// Writes the loop's own thread makes in one turn (a node answering the calls it read, resuming the
/// callers whose answers it read) leave in one system call at the end of the turn: the first at once,
/// the rest together before the loop polls again.
@Suite("Batched writes of a loop's turn")
struct TransportBatchedWritesTests {
    struct Pair {
        var loop: EventLoop
        var client: Connection
        var server: Connection
    }

    /// A connected pair on one loop (`batchesWrites` as given).
    func pair(batchesWrites: Bool = true, takeover: Duration = EventLoop.defaultTakeover) async throws -> Pair {
        let loop = try EventLoop(takeover: takeover, batchesWrites: batchesWrites)
        let unbounded = ConnectionLimits().withoutHandshakeDeadline
        let listener = try loop.listen(on: .unix(path: try temporaryFolder() + "/b.sock"), options: ListenerOptions(limits: unbounded))
        let client = try await loop.connect(to: listener.address, limits: unbounded)
        let server = try await withDeadline("accept") { try await accept(listener) }
        client.markEstablished()
        server.markEstablished()
        return Pair(loop: loop, client: client, server: server)
    }

    /// Frame `index`: its number, then filler.
    static func frame(_ index: Int) -> [UInt8] {
        Array("frame \(index) ".utf8) + [UInt8](repeating: UInt8(truncatingIfNeeded: index), count: index % 50)
    }

    /// A five-byte frame: the sender, then the index.
    static func tagged(_ sender: UInt8, _ index: Int) -> [UInt8] {
        [sender] + withUnsafeBytes(of: UInt32(index).bigEndian, Array.init)
    }

    /// The next `count` frames of `connection`, or nil when it ends before.
    static func frames(_ count: Int, of connection: Connection) async throws -> [[UInt8]]? {
        var received: [[UInt8]] = []
        var iterator = connection.frames.makeAsyncIterator()
        while received.count < count {
            guard let frame = try await iterator.next() else { return nil }
            received.append(frame)
        }
        return received
    }

    @Test("Frames a task sends from the loop thread in one turn arrive whole and in order: the first at once, the rest in one batch")
    func oneTurnsFramesGoOutInOneBatch() async throws {
        let link = try await pair()
        defer { Task { await link.loop.shutdown() } }
        let before = link.client.sendCalls
        let client = link.client
        // One job on the loop thread, without a suspension: one turn.
        try await Task(executorPreference: link.loop) {
            for index in 0..<50 { try client.enqueue(Self.frame(index)) }
        }.value
        let received = try await withDeadline("every frame") { try await Self.frames(50, of: link.server) }
        #expect(received == (0..<50).map(Self.frame))
        // The first frame at once, the other 49 in one call at the turn's end.
        #expect(link.client.sendCalls - before == 2)
    }

    @Test("A loop that does not batch writes every frame at once")
    func aLoopThatDoesNotBatchDefersNothing() async throws {
        let link = try await pair(batchesWrites: false)
        defer { Task { await link.loop.shutdown() } }
        let client = link.client
        try await Task(executorPreference: link.loop) {
            for index in 0..<20 { try client.enqueue(Self.frame(index)) }
        }.value
        let received = try await withDeadline("every frame") { try await Self.frames(20, of: link.server) }
        #expect(received == (0..<20).map(Self.frame))
        #expect(link.client.sendCalls == 20)
    }

    @Test("Frames deferred by a task job that then blocks the loop thread go out once another thread takes the loop over")
    func deferredFramesOfABlockedJobGoOutAfterTheTakeover() async throws {
        let link = try await pair(takeover: .milliseconds(20))
        let gate = ThreadGate()
        defer {
            gate.open()
            Task { await link.loop.shutdown() }
        }
        let client = link.client
        let blocker = Mutex<Task<Void, any Error>?>(nil)
        await gate.awaitEntered {
            blocker.withLock {
                $0 = Task(executorPreference: link.loop) {
                    for index in 0..<3 { try client.enqueue(Self.frame(index)) }
                    gate.block()
                }
            }
        }
        // The job holds the loop thread with two frames deferred; they arrive while it still does.
        let received = try await withDeadline("the deferred frames while the job blocks") {
            try await Self.frames(3, of: link.server)
        }
        #expect(received == (0..<3).map(Self.frame))
        #expect(link.loop.takeovers >= 1)
        gate.open()
        try await blocker.withLock { $0 }?.value
    }

    @Test("An orderly close in the turn that deferred frames sends them all before the end")
    func anOrderlyCloseAfterDeferredFramesSendsThemFirst() async throws {
        let link = try await pair()
        defer { Task { await link.loop.shutdown() } }
        let client = link.client
        try await Task(executorPreference: link.loop) {
            for index in 0..<5 { try client.enqueue(Self.frame(index)) }
            client.close()
        }.value
        let outcome = try await withDeadline("the frames, then the end") { () -> ([[UInt8]], Bool) in
            var received: [[UInt8]] = []
            var iterator = link.server.frames.makeAsyncIterator()
            while let frame = try await iterator.next() { received.append(frame) }
            return (received, true)
        }
        #expect(outcome.0 == (0..<5).map(Self.frame))
        #expect(link.client.sendCalls == 2)
    }

    @Test("Frames from the loop thread, deferred or not, and from another thread keep each sender's order")
    func loopAndThreadSendersKeepTheirOrder() async throws {
        let link = try await pair()
        defer { Task { await link.loop.shutdown() } }
        let client = link.client
        let perSender = 2_000
        let fromLoop = Task(executorPreference: link.loop) {
            // Batches of 10 in one turn each; the suspension ends the turn.
            for batch in 0..<(perSender / 10) {
                for index in (batch * 10)..<(batch * 10 + 10) { try client.enqueue(Self.tagged(1, index)) }
                await Task.yield()
            }
        }
        let fromThread = Task.detached {
            for index in 0..<perSender { try client.enqueue(Self.tagged(2, index)) }
        }
        let problem = try await withDeadline("every frame of both senders", 60) { () -> String? in
            var next: [UInt8: Int] = [1: 0, 2: 0]
            var iterator = link.server.frames.makeAsyncIterator()
            for _ in 0..<(2 * perSender) {
                guard let frame = try await iterator.next(), frame.count == 5, let expected = next[frame[0]] else {
                    return "a frame was lost or garbled"
                }
                let index = frame[1...].reduce(0) { $0 << 8 | Int($1) }
                guard index == expected else { return "sender \(frame[0]): frame \(index) came when \(expected) was due" }
                next[frame[0]] = expected + 1
            }
            return nil
        }
        try await fromLoop.value
        try await fromThread.value
        #expect(problem == nil, "\(problem ?? "")")
    }
}
