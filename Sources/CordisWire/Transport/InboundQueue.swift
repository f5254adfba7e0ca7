/// The items a connection read and its consumer has not taken yet, and the bounds that pause reading.
///
/// A value with no lock, no socket and no clock: the connection keeps one under its lock and turns
/// what it answers into epoll interest. Reading pauses when the queue reaches either bound (frames or
/// bytes), so the peer's writes block and nothing is lost, and resumes once the consumer drained it to
/// half of both. Tested without a socket (`InboundQueueTests`).
struct InboundQueue {
    private var items: [(item: InboundItem, bytes: Int)] = []
    private var head = 0
    /// The bytes the queued items stand for (a decoded message counts its frame's payload).
    private(set) var bytes = 0
    /// True while the connection must not read its socket.
    private(set) var isPaused = false
    /// The most items queued before reading pauses.
    private(set) var maxItems: Int
    /// The most bytes queued before reading pauses.
    private(set) var maxBytes: Int

    /// An empty queue with these bounds.
    init(maxItems: Int, maxBytes: Int) {
        self.maxItems = maxItems
        self.maxBytes = maxBytes
    }

    /// How many items wait for the consumer.
    var count: Int { items.count - head }

    /// Queues what one read produced, in order (each item with the bytes it counts for), takes the
    /// oldest item out again for a consumer already waiting (`handing`), then pauses reading when a
    /// bound is reached, or lifts a pause the consumer drained. Returns the item handed over and
    /// whether reading goes on.
    mutating func append(
        _ batch: OneOrMore<(InboundItem, Int)>, handing: Bool
    ) -> (handed: InboundItem?, reading: Bool) {
        for (item, size) in batch {
            items.append((item, size))
            bytes += size
        }
        let handed = handing ? pop() : nil
        if count >= maxItems || bytes >= maxBytes {
            isPaused = true
        } else {
            _ = resumeIfDrained()
        }
        return (handed, !isPaused)
    }

    /// The oldest item, taken out; nil when none waits.
    mutating func pop() -> InboundItem? {
        guard head < items.count else { return nil }
        let (item, size) = items[head]
        items[head] = (.frame([]), 0)
        head += 1
        bytes -= size
        if head == items.count {
            items.removeAll(keepingCapacity: true)
            head = 0
        } else if head >= 64 && head * 2 >= items.count {
            items.removeSubrange(0..<head)
            head = 0
        }
        return item
    }

    /// Every item, taken out in order.
    mutating func popAll() -> [InboundItem] {
        var taken: [InboundItem] = []
        while let item = pop() { taken.append(item) }
        return taken
    }

    /// Lifts the pause once the queue drained to half of both bounds; true when it was lifted (the
    /// connection must then watch its socket for reading again).
    mutating func resumeIfDrained() -> Bool {
        guard isPaused, count <= maxItems / 2, bytes <= maxBytes / 2 else { return false }
        isPaused = false
        return true
    }

    /// New bounds (the full ones once a handshake is over); a pause they no longer justify is lifted
    /// as `resumeIfDrained()` would. True when it was lifted.
    mutating func setBounds(maxItems: Int, maxBytes: Int) -> Bool {
        self.maxItems = maxItems
        self.maxBytes = maxBytes
        return resumeIfDrained()
    }

    /// Lifts the pause whatever is queued: a closing connection reads on to discard the peer's bytes
    /// until its end.
    mutating func unpause() {
        isPaused = false
    }
}
