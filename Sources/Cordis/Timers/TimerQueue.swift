/// The pending timers of one world, in deadline order, behind a single wait on the world's clock: a
/// timer costs a heap slot and a table entry, not a task, and cancelling one (as every unloading fiber
/// does for its timers) only forgets it. The wait is re-armed when an earlier deadline arrives and
/// dropped when no timer is left.
@CordisActor
final class TimerQueue {
    private struct Item {
        let deadline: Duration
        let id: Int

        func precedes(_ other: Item) -> Bool {
            deadline < other.deadline || (deadline == other.deadline && id < other.id)
        }
    }

    private let clock: TimerClock
    /// A binary min-heap; items whose id has no action are cancelled and skipped.
    private var heap: [Item] = []
    private var actions: [Int: @CordisActor () -> Void] = [:]
    private var nextID = 0
    private var driver: Task<Void, Never>?
    /// The deadline the driver waits for, nil when none waits.
    private var armedFor: Duration?
    /// Tells the current driver from one replaced while its wait was ending.
    private var generation = 0

    init(clock: TimerClock) {
        self.clock = clock
    }

    /// How many timers are pending.
    var count: Int { actions.count }

    /// Runs `action` once `delay` has passed, unless `cancel` is called first; returns the timer's id.
    @discardableResult
    func schedule(after delay: Duration, _ action: @escaping @CordisActor () -> Void) -> Int {
        nextID += 1
        let item = Item(deadline: clock.elapsed() + delay, id: nextID)
        actions[item.id] = action
        push(item)
        if armedFor.map({ item.deadline < $0 }) ?? true { arm() }
        return item.id
    }

    /// Forgets timer `id`; it never runs. Cancelling twice, or a timer that ran, does nothing.
    func cancel(_ id: Int) {
        guard actions.removeValue(forKey: id) != nil else { return }
        if actions.isEmpty {
            heap.removeAll()
            disarm()
        } else if heap.count > 64, heap.count > actions.count * 2 {
            // Mostly cancelled items: rebuild from the live ones (amortised: the heap halves first).
            let live = heap.filter { actions[$0.id] != nil }
            heap.removeAll(keepingCapacity: true)
            for item in live { push(item) }
        }
    }

    private func disarm() {
        generation &+= 1
        driver?.cancel()
        driver = nil
        armedFor = nil
    }

    /// Waits for the earliest live deadline (replacing the current wait).
    private func arm() {
        disarm()
        while let top = heap.first, actions[top.id] == nil { popMin() }
        guard let top = heap.first else { return }
        armedFor = top.deadline
        let wait = top.deadline - clock.elapsed()
        let clock = self.clock
        let generation = self.generation
        driver = Task { [weak self] in
            if wait > .zero {
                do { try await clock.sleep(wait) } catch { return }
            }
            self?.fireDue(generation)
        }
    }

    /// Runs every timer whose deadline has passed, in deadline order, then waits for the next.
    private func fireDue(_ generation: Int) {
        guard generation == self.generation else { return }
        driver = nil
        armedFor = nil
        let now = clock.elapsed()
        // Bounded by the heap: each pass pops one item.
        while let top = heap.first, top.deadline <= now {
            popMin()
            if let action = actions.removeValue(forKey: top.id) { action() }
        }
        if armedFor == nil { arm() }
    }

    private func push(_ item: Item) {
        heap.append(item)
        var child = heap.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard heap[child].precedes(heap[parent]) else { break }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    private func popMin() {
        guard !heap.isEmpty else { return }
        heap.swapAt(0, heap.count - 1)
        heap.removeLast()
        var parent = 0
        while true {
            let left = 2 * parent + 1, right = left + 1
            var first = parent
            if left < heap.count, heap[left].precedes(heap[first]) { first = left }
            if right < heap.count, heap[right].precedes(heap[first]) { first = right }
            guard first != parent else { return }
            heap.swapAt(parent, first)
            parent = first
        }
    }
}
