@testable import CordisWire
import Foundation
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The send path (a sender writes outside the lock, others queue behind it, the loop finishes what a
/// full socket left), the stream-filter insertion point, and a link's one queue of decoded messages.
@Suite("Connection writes and the link's queue")
struct TransportWriterTests {
    struct Pair {
        var loop: EventLoop
        var client: Connection
        var server: Connection
    }

    func pair(server limits: ConnectionLimits = ConnectionLimits(), client clientLimits: ConnectionLimits = ConnectionLimits()) async throws -> Pair {
        let loop = try EventLoop()
        let listener = try loop.listen(
            on: .unix(path: try temporaryFolder() + "/w.sock"), options: ListenerOptions(limits: limits.withoutHandshakeDeadline))
        let client = try await loop.connect(to: listener.address, limits: clientLimits.withoutHandshakeDeadline)
        let server = try await withDeadline("accept") { try await accept(listener) }
        client.markEstablished()
        server.markEstablished()
        return Pair(loop: loop, client: client, server: server)
    }

    /// Frame `index` of sender `sender`: its number in the first 8 bytes, then filler of a size that
    /// varies, so partial writes cut frames at many places.
    static func frame(sender: Int, index: Int) -> [UInt8] {
        var frame = [UInt8](repeating: UInt8(truncatingIfNeeded: sender), count: 8 + (index * 37 + sender * 101) % 3_000)
        withUnsafeBytes(of: UInt32(sender).bigEndian) { frame.replaceSubrange(0..<4, with: $0) }
        withUnsafeBytes(of: UInt32(index).bigEndian) { frame.replaceSubrange(4..<8, with: $0) }
        return frame
    }

    @Test("Eight threads sending at once: every frame arrives whole, and each sender's frames in its order")
    func concurrentSendersKeepFramesWholeAndOrdered() async throws {
        let link = try await pair(client: ConnectionLimits(outboundBufferBytes: 256 * 1024 * 1024))
        defer { Task { await link.loop.shutdown() } }
        let senders = 8
        let perSender = 2_000
        let client = link.client
        let failures = Atomic<Int>(0)
        // Plain threads, not tasks: they really run at the same time, while the socket fills up.
        let done = DispatchGroup()
        for sender in 0..<senders {
            done.enter()
            Thread {
                for index in 0..<perSender {
                    if (try? client.enqueue(Self.frame(sender: sender, index: index))) == nil {
                        failures.add(1, ordering: .relaxed)
                    }
                }
                done.leave()
            }.start()
        }
        let outcome = try await withDeadline("receive every frame", 60) { () -> String? in
            var iterator = link.server.frames.makeAsyncIterator()
            var next = [Int](repeating: 0, count: senders)
            for _ in 0..<(senders * perSender) {
                guard let frame = try await iterator.next(), frame.count >= 8 else { return "a frame was lost or cut" }
                let sender = frame[0..<4].reduce(0) { $0 << 8 | Int($1) }
                let index = frame[4..<8].reduce(0) { $0 << 8 | Int($1) }
                guard sender < senders else { return "a frame from sender \(sender) is garbled" }
                guard index == next[sender] else { return "sender \(sender): frame \(index) came when \(next[sender]) was due" }
                guard frame == Self.frame(sender: sender, index: index) else { return "frame \(index) of \(sender) is corrupt" }
                next[sender] += 1
            }
            return nil
        }
        // Awaited, not waited for: a blocked thread of the concurrency pool would stall the other tests.
        await withCheckedContinuation { (finished: CheckedContinuation<Void, Never>) in
            done.notify(queue: .global()) { finished.resume() }
        }
        #expect(failures.load(ordering: .relaxed) == 0)
        #expect(outcome == nil, "\(outcome ?? "")")
        try await withDeadline("the outbound buffer empties") {
            while link.client.bufferedOutboundBytes > 0 { await Task.yield() }
        }
    }

    /// The frames are more than the socket holds, so most wait in the outbound buffer when `close` is
    /// called; the drain deadline is long enough for a loaded machine.
    @Test("A close while a sender's frames wait behind a full socket still delivers them, then ends the stream")
    func orderlyCloseFlushesQueuedBytes() async throws {
        let link = try await pair(
            server: ConnectionLimits(inboundQueueFrames: 4, inboundQueueBytes: 16 * 1024),
            client: ConnectionLimits(outboundBufferBytes: 64 * 1024 * 1024, drainTimeout: .seconds(30)))
        defer { Task { await link.loop.shutdown() } }
        let count = 600
        for index in 0..<count { try link.client.enqueue(Self.frame(sender: 1, index: index)) }
        #expect(link.client.bufferedOutboundBytes > 0)
        link.client.close()
        let received = try await withDeadline("drain", 30) { () -> Int in
            var received = 0
            for try await frame in link.server.frames {
                guard frame == Self.frame(sender: 1, index: received) else { break }
                received += 1
            }
            return received
        }
        #expect(received == count)
    }

    /// Adds one to every byte on the way out and takes it off on the way in: a stand-in for an
    /// encryption layer at the stream-filter insertion point.
    final class ShiftFilter: StreamFilter {
        let seen = Atomic<Int>(0)

        func inbound(_ bytes: UnsafeRawBufferPointer) throws(TransportError) -> (plain: [UInt8], reply: [UInt8]) {
            seen.add(bytes.count, ordering: .relaxed)
            return (bytes.map { $0 &- 1 }, [])
        }

        func outbound(_ framed: [UInt8]) throws(TransportError) -> [UInt8] {
            framed.map { $0 &+ 1 }
        }
    }

    @Test("A stream filter on both ends sees every byte, and frames pass through it unchanged")
    func streamFilterSitsBetweenSocketAndFrames() async throws {
        let link = try await pair()
        defer { Task { await link.loop.shutdown() } }
        let clientFilter = ShiftFilter()
        let serverFilter = ShiftFilter()
        link.client.setStreamFilter(clientFilter)
        link.server.setStreamFilter(serverFilter)
        try link.client.enqueue(bytes("hello"))
        #expect(text(try await withDeadline("server reads") { try await nextFrame(link.server) }) == "hello")
        try link.server.enqueue(bytes("world"))
        #expect(text(try await withDeadline("client reads") { try await nextFrame(link.client) }) == "world")
        #expect(serverFilter.seen.load(ordering: .relaxed) == 4 + 5)
        #expect(clientFilter.seen.load(ordering: .relaxed) == 4 + 5)
    }

    @Test("A link whose consumer stops reading pauses its connection at the queue bound and loses no message")
    func linkBackpressureCountsDecodedMessages() async throws {
        let loop = try EventLoop()
        defer { Task { await loop.shutdown() } }
        let limits = ConnectionLimits(inboundQueueFrames: 16, inboundQueueBytes: 1024 * 1024)
        let listener = try loop.listen(on: .unix(path: try temporaryFolder() + "/q.sock"), options: ListenerOptions(limits: limits))
        @Sendable func configuration(_ name: String) -> HandshakeConfiguration {
            HandshakeConfiguration(identity: PeerIdentity(role: .node, name: name, incarnation: "\(name)-1"), secrets: nil)
        }
        let serverTask = Task {
            try await Link.establish(try await accept(listener), side: .responder, configuration: configuration("b"))
        }
        let client = try await withDeadline("dial") {
            try await Link.connect(to: listener.address, on: loop, configuration: configuration("a"))
        }
        let server = try await withDeadline("accept") { try await serverTask.value }
        let count = 2_000
        for index in 0..<count {
            try client.enqueue(.call(RemoteCall(id: index, service: "clock", realm: nil, method: "now", args: ["pad": .string(String(repeating: "x", count: 200))])))
        }
        try await withDeadline("the server pauses reading") {
            while !server.connection.isReadingPaused { await Task.yield() }
        }
        let ids = try await withDeadline("read every message", 30) { () -> [Int] in
            var ids: [Int] = []
            var iterator = server.messages.makeAsyncIterator()
            while ids.count < count, case .call(let call)? = try await iterator.next() { ids.append(call.id) }
            return ids
        }
        #expect(ids == Array(0..<count))
        client.close()
    }
}
