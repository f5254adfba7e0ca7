/// A pointer chase through a buffer of a given size: the time of one dependent load, which tells how much
/// of the processor's caches this process gets at the moment.
///
/// Every load depends on the one before (the buffer holds one random cycle through all its slots), so
/// the processor cannot overlap them: a buffer that fits in the core's own cache (L2) costs a few
/// nanoseconds per step whatever else the machine runs, one that needs the shared last-level cache (L3)
/// costs what the other tenants of that cache leave it, and one far larger than every cache costs a
/// memory access. On a virtual machine whose last-level cache is shared with other guests, the middle
/// size moves with their load while the other two stay put: the figures of a run whose working set
/// spills out of L2 (a node-to-node call, two processes on one CPU) move with it, a small C echo's do
/// not. `cordis-bench all` records it next to the call figures (`machine_chase_*_ns`).
final class CacheProbe {
    /// The bytes of the buffer.
    let bytes: Int
    private let next: UnsafeMutableBufferPointer<Int>

    /// Builds one random cycle through every slot (Sattolo's shuffle).
    init(bytes: Int) {
        self.bytes = bytes
        let count = max(2, bytes / MemoryLayout<Int>.stride)
        next = UnsafeMutableBufferPointer<Int>.allocate(capacity: count)
        var order = Array(0..<count)
        // Bounded: one pass over the slots.
        for index in stride(from: count - 1, to: 0, by: -1) {
            order.swapAt(index, Int.random(in: 0..<index))
        }
        for position in 0..<count { next[order[position]] = order[(position + 1) % count] }
    }

    deinit { next.deallocate() }

    /// Nanoseconds per step over `steps` dependent loads, after one warming pass through the buffer.
    func nanosecondsPerStep(steps: Int) -> Double {
        var slot = 0
        // Bounded: one pass, then `steps` steps.
        for _ in 0..<next.count { slot = next[slot] }
        let clock = ContinuousClock()
        let start = clock.now
        for _ in 0..<steps { slot = next[slot] }
        let elapsed = clock.now - start
        // The slot reached keeps the loop from being optimized away.
        precondition(slot >= 0 && slot < next.count)
        let parts = elapsed.components
        return (Double(parts.seconds) * 1e9 + Double(parts.attoseconds) / 1e9) / Double(steps)
    }

    /// The sizes `cordis-bench all` chases: within the core's L2, in the shared L3, beyond every cache.
    static let sizes: [(key: String, bytes: Int)] = [
        ("machine_chase_256k_ns", 256 << 10), ("machine_chase_4m_ns", 4 << 20), ("machine_chase_64m_ns", 64 << 20),
    ]
}
