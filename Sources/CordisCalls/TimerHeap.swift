/// Timers in deadline order: the one timer structure of the runtime's fibers (`Cordis`) and of the
/// transport's event loop (`CordisWire`).
///
/// A binary min-heap of deadlines over a table of slots that hold the jobs. Scheduling and taking the
/// earliest timer cost O(log n); cancelling costs O(1) and no hashing: it empties the timer's slot and
/// leaves its heap entry behind, skipped when it comes up. Once skipped entries outnumber the live
/// timers the heap is rebuilt from the live ones, so cancelled timers never hold much more memory than
/// live ones. Ties between equal deadlines go to the timer scheduled first.
///
/// A value type with no clock of its own: the owner passes deadlines and the time in.
package struct TimerHeap<Deadline: Comparable, Job> {
    private struct Entry {
        var deadline: Deadline
        /// Scheduling order, for ties.
        var sequence: UInt64
        var slot: Int
        var generation: UInt32
    }

    private struct Slot {
        /// Bumped each time the slot is emptied, so that an id or a heap entry of an earlier timer in
        /// this slot no longer matches.
        var generation: UInt32 = 0
        var job: Job?
    }

    private var heap: [Entry] = []
    private var slots: [Slot] = []
    private var freeSlots: [Int] = []
    private var nextSequence: UInt64 = 0

    /// The number of timers not yet taken nor cancelled.
    package private(set) var count = 0

    /// Creates an empty heap.
    package init() {}

    /// Whether no timer waits.
    package var isEmpty: Bool { count == 0 }

    /// Entries in the heap, cancelled ones included (for tests of the bound).
    package var storedEntries: Int { heap.count }

    /// Adds a timer due at `deadline`; returns its id (never the id of a timer still waiting).
    package mutating func insert(deadline: Deadline, job: Job) -> UInt64 {
        let slot: Int
        if let free = freeSlots.popLast() {
            slot = free
            slots[slot].job = job
        } else {
            slot = slots.count
            slots.append(Slot(job: job))
        }
        let generation = slots[slot].generation
        nextSequence &+= 1
        heap.append(Entry(deadline: deadline, sequence: nextSequence, slot: slot, generation: generation))
        siftUp(heap.count - 1)
        count += 1
        return UInt64(UInt32(truncatingIfNeeded: slot)) << 32 | UInt64(generation)
    }

    /// Cancels timer `id`, returning its job; nil when it was already taken, cancelled, or never was.
    @discardableResult
    package mutating func remove(id: UInt64) -> Job? {
        let slot = Int(id >> 32)
        guard slot < slots.count, slots[slot].generation == UInt32(truncatingIfNeeded: id) else { return nil }
        let job = empty(slot)
        if heap.count > 2 * count + 64 { rebuild() }
        return job
    }

    /// Cancels every timer.
    package mutating func removeAll() {
        heap.removeAll(keepingCapacity: true)
        guard count > 0 else { return }
        for slot in slots.indices where slots[slot].job != nil { _ = empty(slot) }
    }

    /// The earliest deadline of a waiting timer (nil when none waits).
    package mutating func earliestDeadline() -> Deadline? {
        dropCancelledTop()
        return heap.first?.deadline
    }

    /// Removes and returns the job of the earliest timer if it is due at `now`.
    package mutating func popDue(at now: Deadline) -> Job? {
        dropCancelledTop()
        guard let top = heap.first, top.deadline <= now else { return nil }
        removeTop()
        return empty(top.slot)
    }

    /// Removes and returns the jobs of the timers due at `now`, earliest first.
    package mutating func takeDue(at now: Deadline) -> [Job] {
        var due: [Job] = []
        // Bounded by the heap: each pass removes one entry.
        while let job = popDue(at: now) { due.append(job) }
        return due
    }

    // MARK: The slots and the heap

    private mutating func empty(_ slot: Int) -> Job? {
        guard let job = slots[slot].job else { return nil }
        slots[slot].job = nil
        slots[slot].generation &+= 1
        freeSlots.append(slot)
        count -= 1
        return job
    }

    private func isLive(_ entry: Entry) -> Bool {
        let slot = slots[entry.slot]
        return slot.generation == entry.generation && slot.job != nil
    }

    private static func precedes(_ left: Entry, _ right: Entry) -> Bool {
        left.deadline < right.deadline || (left.deadline == right.deadline && left.sequence < right.sequence)
    }

    private mutating func dropCancelledTop() {
        while let top = heap.first, !isLive(top) { removeTop() }
    }

    private mutating func removeTop() {
        let last = heap.removeLast()
        guard !heap.isEmpty else { return }
        heap[0] = last
        siftDown(0)
    }

    private mutating func rebuild() {
        heap = heap.filter(isLive)
        guard heap.count > 1 else { return }
        for index in stride(from: heap.count / 2 - 1, through: 0, by: -1) { siftDown(index) }
    }

    private mutating func siftUp(_ start: Int) {
        var child = start
        while child > 0 {
            let parent = (child - 1) / 2
            guard Self.precedes(heap[child], heap[parent]) else { return }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    private mutating func siftDown(_ start: Int) {
        var parent = start
        while true {
            let left = 2 * parent + 1
            guard left < heap.count else { return }
            var first = left
            let right = left + 1
            if right < heap.count, Self.precedes(heap[right], heap[left]) { first = right }
            guard Self.precedes(heap[first], heap[parent]) else { return }
            heap.swapAt(first, parent)
            parent = first
        }
    }
}
