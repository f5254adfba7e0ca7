import Testing
@testable import CordisWire

/// A connection's inbound queue and its read pause, tested as a value: items in, items and pauses out.
@Suite("The inbound queue")
struct InboundQueueTests {
    private static func batch(_ sizes: [Int]) -> OneOrMore<(InboundItem, Int)> {
        var batch = OneOrMore<(InboundItem, Int)>()
        for size in sizes { batch.append((.frame(Array(repeating: UInt8(size % 256), count: size)), size)) }
        return batch
    }

    private static func size(_ item: InboundItem?) -> Int? {
        guard case .frame(let payload)? = item else { return nil }
        return payload.count
    }

    /// Expects `got` to be `expected`: a plain call, so `got` may come from a mutating method.
    private func check<Value: Equatable>(
        _ got: Value, _ expected: Value, _ comment: Comment? = nil, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        #expect(got == expected, comment, sourceLocation: sourceLocation)
    }

    @Test("hands items out in the order they came, across batches and compactions")
    func order() {
        var queue = InboundQueue(maxItems: 10_000, maxBytes: 1 << 30)
        var expected: [Int] = []
        var seen: [Int] = []
        for round in 0..<50 {
            let sizes = (0..<(round % 7 + 1)).map { round * 10 + $0 }
            expected += sizes
            check(queue.append(Self.batch(sizes), handing: false).reading, true)
            // Take fewer than came, so the head moves on and the queue compacts itself now and then.
            for _ in 0..<(round % 5) {
                if let size = Self.size(queue.pop()) { seen.append(size) }
            }
        }
        while let item = queue.pop() { seen.append(Self.size(item) ?? -1) }
        #expect(seen == expected)
        #expect(queue.count == 0)
        #expect(queue.bytes == 0)
    }

    @Test("hands the oldest item to a consumer already waiting, and counts only what stays")
    func handsToWaiter() {
        var queue = InboundQueue(maxItems: 2, maxBytes: 1000)
        let (handed, reading) = queue.append(Self.batch([3, 5]), handing: true)
        #expect(Self.size(handed) == 3)
        #expect(reading, "one item left is under the bound of two")
        #expect(queue.count == 1)
        #expect(queue.bytes == 5)
    }

    @Test("pauses at either bound, and resumes only once drained to half of both")
    func pauseAndResume() {
        var byCount = InboundQueue(maxItems: 4, maxBytes: 1000)
        check(byCount.append(Self.batch([1, 1, 1]), handing: false).reading, true)
        check(byCount.append(Self.batch([1]), handing: false).reading, false)
        #expect(byCount.isPaused)
        _ = byCount.pop()
        check(byCount.resumeIfDrained(), false, "three left is over half of four")
        _ = byCount.pop()
        check(byCount.resumeIfDrained(), true)
        #expect(!byCount.isPaused)
        check(byCount.resumeIfDrained(), false, "lifted once")

        var byBytes = InboundQueue(maxItems: 100, maxBytes: 100)
        check(byBytes.append(Self.batch([30, 70]), handing: false).reading, false)
        _ = byBytes.pop()
        check(byBytes.resumeIfDrained(), false, "70 bytes left are over half of 100")
        _ = byBytes.pop()
        check(byBytes.resumeIfDrained(), true)
    }

    @Test("an append under the bounds lifts a pause the consumer drained meanwhile")
    func appendResumes() {
        var queue = InboundQueue(maxItems: 4, maxBytes: 1000)
        check(queue.append(Self.batch([1, 1, 1, 1]), handing: false).reading, false)
        _ = queue.popAll()
        #expect(queue.isPaused, "popping alone does not lift the pause: the connection asks")
        check(queue.append(Self.batch([1]), handing: false).reading, true)
        #expect(!queue.isPaused)
    }

    @Test("the full bounds after a handshake lift a pause the small ones imposed")
    func raisedBounds() {
        var queue = InboundQueue(maxItems: 2, maxBytes: 64)
        check(queue.append(Self.batch([10, 10]), handing: false).reading, false)
        check(queue.setBounds(maxItems: 100, maxBytes: 1 << 20), true)
        #expect(!queue.isPaused)
        #expect(queue.count == 2, "nothing queued is lost")

        var stillFull = InboundQueue(maxItems: 2, maxBytes: 64)
        check(stillFull.append(Self.batch([40, 40]), handing: false).reading, false)
        check(stillFull.setBounds(maxItems: 100, maxBytes: 100), false, "80 bytes are over half of 100")
        #expect(stillFull.isPaused)
    }

    @Test("a closing connection reads on whatever is queued")
    func unpause() {
        var queue = InboundQueue(maxItems: 1, maxBytes: 10)
        check(queue.append(Self.batch([5]), handing: false).reading, false)
        queue.unpause()
        #expect(!queue.isPaused)
        #expect(queue.count == 1)
    }
}
