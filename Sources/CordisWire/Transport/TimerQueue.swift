/// The event loop's timers: a binary min-heap of deadlines, with the jobs by id beside it.
///
/// Scheduling and taking the earliest timer cost O(log n), whatever the number of timers (every call
/// in flight arms one). Cancelling removes the job at once and leaves its heap entry behind, skipped
/// when it comes up; once the skipped entries outnumber the live timers the heap is rebuilt from the
/// live ones, so cancelled timers never hold more than about as much memory as live ones.
///
/// A value type with no clock of its own: the loop passes the time in, tests drive it directly.
struct TimerQueue<Job> {
    private struct Entry {
        var deadline: ContinuousClock.Instant
        var id: UInt64
    }

    private var heap: [Entry] = []
    /// The waiting timers by id (ids are never reused, so an id missing here marks a cancelled entry).
    private var jobs: [UInt64: (deadline: ContinuousClock.Instant, job: Job)] = [:]
    /// The id of the heap's top entry when it is known to be a waiting timer: the loop asks for the
    /// earliest deadline at every turn, and the answer then costs no lookup in `jobs`.
    private var liveTop: UInt64?

    /// The number of timers not yet run nor cancelled.
    var count: Int { jobs.count }

    /// Whether no timer waits.
    var isEmpty: Bool { jobs.isEmpty }

    /// Entries in the heap, cancelled ones included (for tests of the bound).
    var storedEntries: Int { heap.count }

    /// Adds timer `id` (unique among the timers waiting) due at `deadline`.
    mutating func insert(id: UInt64, deadline: ContinuousClock.Instant, job: Job) {
        jobs[id] = (deadline, job)
        heap.append(Entry(deadline: deadline, id: id))
        siftUp(heap.count - 1)
        // The new entry came to the top, or the top stayed what it was.
        if heap[0].id == id { liveTop = id }
    }

    /// Cancels timer `id`; false when it already ran, was cancelled, or never was.
    @discardableResult
    mutating func remove(id: UInt64) -> Bool {
        guard jobs.removeValue(forKey: id) != nil else { return false }
        if liveTop == id { liveTop = nil }
        if heap.count > 2 * jobs.count + 64 { rebuild() }
        return true
    }

    /// Cancels every timer.
    mutating func removeAll() {
        heap.removeAll()
        jobs.removeAll()
        liveTop = nil
    }

    /// The earliest deadline of a waiting timer (nil when none waits).
    mutating func earliestDeadline() -> ContinuousClock.Instant? {
        dropCancelledTop()
        return heap.first?.deadline
    }

    /// Removes and returns the jobs of the timers due at `now`, earliest first (ties by id, the order
    /// they were scheduled in).
    mutating func takeDue(at now: ContinuousClock.Instant) -> [Job] {
        var due: [Job] = []
        while true {
            dropCancelledTop()
            guard let top = heap.first, top.deadline <= now else { break }
            removeTop()
            if let entry = jobs.removeValue(forKey: top.id) { due.append(entry.job) }
        }
        return due
    }

    // MARK: The heap

    private static func precedes(_ left: Entry, _ right: Entry) -> Bool {
        left.deadline < right.deadline || (left.deadline == right.deadline && left.id < right.id)
    }

    private mutating func dropCancelledTop() {
        if let top = heap.first, top.id == liveTop { return }
        while let top = heap.first, jobs[top.id] == nil { removeTop() }
        liveTop = heap.first?.id
    }

    private mutating func removeTop() {
        liveTop = nil
        let last = heap.removeLast()
        guard !heap.isEmpty else { return }
        heap[0] = last
        siftDown(0)
    }

    private mutating func rebuild() {
        liveTop = nil
        heap = jobs.map { Entry(deadline: $0.value.deadline, id: $0.key) }
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
