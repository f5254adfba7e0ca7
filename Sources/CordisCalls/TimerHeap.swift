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
///
/// Its code is `@inlinable` so that each owner gets it specialised for its deadline and job types:
/// generic code called across modules otherwise runs unspecialised (looking up type metadata at every
/// call), which made unloading fibers that hold timers slower than with a heap of their own. It is
/// SPI, not `package`: with Swift 6.3 a `package` declaration's inlinable body is not inlined into
/// other modules; an SPI `public` one is, and stays out of sight of code that does not import the SPI.
@_spi(CordisRuntime) public struct TimerHeap<Deadline: Comparable, Job> {
    @usableFromInline struct Entry {
        @usableFromInline var deadline: Deadline
        /// Scheduling order, for ties.
        @usableFromInline var sequence: UInt64
        @usableFromInline var slot: Int
        @usableFromInline var generation: UInt32

        @inlinable init(deadline: Deadline, sequence: UInt64, slot: Int, generation: UInt32) {
            self.deadline = deadline
            self.sequence = sequence
            self.slot = slot
            self.generation = generation
        }
    }

    @usableFromInline struct Slot {
        /// Bumped each time the slot is emptied, so that an id or a heap entry of an earlier timer in
        /// this slot no longer matches.
        @usableFromInline var generation: UInt32 = 0
        @usableFromInline var job: Job?

        @inlinable init(job: Job) {
            self.job = job
        }
    }

    @usableFromInline var heap: [Entry] = []
    @usableFromInline var slots: [Slot] = []
    @usableFromInline var freeSlots: [Int] = []
    @usableFromInline var nextSequence: UInt64 = 0

    /// The number of timers not yet taken nor cancelled.
    @inlinable public var count: Int { live }
    /// `count`, settable by the heap's own inlinable code.
    @usableFromInline var live = 0

    /// Creates an empty heap.
    @inlinable public init() {}

    /// Whether no timer waits.
    @inlinable public var isEmpty: Bool { live == 0 }

    /// Entries in the heap, cancelled ones included (for tests of the bound).
    @inlinable public var storedEntries: Int { heap.count }

    /// Adds a timer due at `deadline`; returns its id (never the id of a timer still waiting).
    @inlinable public mutating func insert(deadline: Deadline, job: Job) -> UInt64 {
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
        live += 1
        return UInt64(UInt32(truncatingIfNeeded: slot)) << 32 | UInt64(generation)
    }

    /// Cancels timer `id`, returning its job; nil when it was already taken, cancelled, or never was.
    @discardableResult @inlinable
    public mutating func remove(id: UInt64) -> Job? {
        let slot = Int(id >> 32)
        guard slot < slots.count, slots[slot].generation == UInt32(truncatingIfNeeded: id) else { return nil }
        let job = empty(slot)
        if heap.count > 2 * live + 64 { rebuild() }
        return job
    }

    /// Cancels every timer.
    @inlinable public mutating func removeAll() {
        heap.removeAll(keepingCapacity: true)
        guard live > 0 else { return }
        for slot in slots.indices where slots[slot].job != nil { _ = empty(slot) }
    }

    /// The earliest deadline of a waiting timer (nil when none waits).
    @inlinable public mutating func earliestDeadline() -> Deadline? {
        dropCancelledTop()
        return heap.first?.deadline
    }

    /// Removes and returns the job of the earliest timer if it is due at `now`.
    @inlinable public mutating func popDue(at now: Deadline) -> Job? {
        dropCancelledTop()
        guard let top = heap.first, top.deadline <= now else { return nil }
        removeTop()
        return empty(top.slot)
    }

    /// Removes and returns the jobs of the timers due at `now`, earliest first.
    @inlinable public mutating func takeDue(at now: Deadline) -> [Job] {
        var due: [Job] = []
        // Bounded by the heap: each pass removes one entry.
        while let job = popDue(at: now) { due.append(job) }
        return due
    }

    // MARK: The slots and the heap

    @inlinable mutating func empty(_ slot: Int) -> Job? {
        guard let job = slots[slot].job else { return nil }
        slots[slot].job = nil
        slots[slot].generation &+= 1
        freeSlots.append(slot)
        live -= 1
        return job
    }

    @inlinable func isLive(_ entry: Entry) -> Bool {
        let slot = slots[entry.slot]
        return slot.generation == entry.generation && slot.job != nil
    }

    @inlinable static func precedes(_ left: Entry, _ right: Entry) -> Bool {
        left.deadline < right.deadline || (left.deadline == right.deadline && left.sequence < right.sequence)
    }

    @inlinable mutating func dropCancelledTop() {
        while let top = heap.first, !isLive(top) { removeTop() }
    }

    @inlinable mutating func removeTop() {
        let last = heap.removeLast()
        guard !heap.isEmpty else { return }
        heap[0] = last
        siftDown(0)
    }

    @inlinable mutating func rebuild() {
        heap = heap.filter(isLive)
        guard heap.count > 1 else { return }
        for index in stride(from: heap.count / 2 - 1, through: 0, by: -1) { siftDown(index) }
    }

    @inlinable mutating func siftUp(_ start: Int) {
        var child = start
        while child > 0 {
            let parent = (child - 1) / 2
            guard Self.precedes(heap[child], heap[parent]) else { return }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    @inlinable mutating func siftDown(_ start: Int) {
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
