@_spi(CordisRuntime) import CordisCalls
import CordisProcessTesting
import Testing

/// The timer heap of the event loop and of the fibers' timers: earliest first, cancellation, and a
/// bound on what cancelled timers keep.
@Suite("Timer heap")
struct TimerHeapTests {
    private let origin = ContinuousClock.now

    private func at(_ milliseconds: Int) -> ContinuousClock.Instant {
        origin.advanced(by: .milliseconds(milliseconds))
    }

    @Test("Due timers come out earliest first, ties in the order they were scheduled; later ones wait")
    func dueInOrder() {
        var queue = TimerHeap<ContinuousClock.Instant, Int>()
        // Deadlines shuffled, two ties (ids 4 and 6 at 30 ms, 2 and 7 at 10 ms).
        let deadlines = [1: 50, 2: 10, 3: 40, 4: 30, 5: 90, 6: 30, 7: 10, 8: 20]
        for id in deadlines.keys.sorted() { _ = queue.insert(deadline: at(deadlines[id]!), job: id) }
        let first = queue.earliestDeadline()
        #expect(first == at(10))
        let early = queue.takeDue(at: at(5))
        #expect(early.isEmpty)
        let byThirty = queue.takeDue(at: at(30))
        #expect(byThirty == [2, 7, 8, 4, 6])
        let next = queue.earliestDeadline()
        #expect(next == at(40))
        #expect(queue.count == 3)
        let rest = queue.takeDue(at: at(1_000))
        #expect(rest == [3, 1, 5])
        let none = queue.earliestDeadline()
        #expect(queue.isEmpty && none == nil)
    }

    @Test("A cancelled timer never runs and no longer decides the earliest deadline; cancelling twice is false")
    func cancelled() {
        var queue = TimerHeap<ContinuousClock.Instant, Int>()
        let first = queue.insert(deadline: at(10), job: 1)
        _ = queue.insert(deadline: at(20), job: 2)
        let third = queue.insert(deadline: at(30), job: 3)
        let once = queue.remove(id: first)
        let twice = queue.remove(id: first)
        let unknown = queue.remove(id: 99 << 32)
        #expect(once == 1 && twice == nil && unknown == nil)
        let earliest = queue.earliestDeadline()
        #expect(earliest == at(20))
        let removedThird = queue.remove(id: third)
        let due = queue.takeDue(at: at(100))
        #expect(removedThird == 3 && due == [2])
        let none = queue.earliestDeadline()
        #expect(none == nil)
        // The slot of the first timer is used again: its old id does not cancel the new timer.
        let reused = queue.insert(deadline: at(5), job: 4)
        #expect(reused != first && queue.remove(id: first) == nil && queue.count == 1)
        queue.removeAll()
        let afterAll = queue.takeDue(at: at(100))
        #expect(queue.isEmpty && afterAll.isEmpty && queue.remove(id: reused) == nil)
    }

    @Test("Calls that each arm and cancel a far timeout (100,000 of them, 64 live at a time) keep the heap bounded and the order right")
    func cancelledTimersAreBounded() {
        var queue = TimerHeap<ContinuousClock.Instant, UInt64>()
        // The heartbeat: one near timer that stays.
        _ = queue.insert(deadline: at(500), job: 0)
        var live: [(id: UInt64, job: UInt64)] = []
        var largest = 0
        var cancelled = 0
        for job in UInt64(1)...100_000 {
            let id = queue.insert(deadline: at(30_000 + Int(job % 1_000)), job: job)
            live.append((id, job))
            if live.count > 64 {
                let oldest = live.removeFirst()
                if queue.remove(id: oldest.id) == oldest.job { cancelled += 1 }
            }
            largest = max(largest, queue.storedEntries)
        }
        #expect(cancelled == 100_000 - 64)
        #expect(queue.count == 65)
        #expect(largest <= 2 * 65 + 64 + 1)
        let earliest = queue.earliestDeadline()
        #expect(earliest == at(500))
        // What is left runs once, in deadline order.
        let due = queue.takeDue(at: at(60_000))
        #expect(due.first == 0)
        #expect(Set(due) == Set([0] + live.map(\.job)))
        let deadlines = due.dropFirst().map { 30_000 + Int($0 % 1_000) }
        #expect(deadlines == deadlines.sorted())
        #expect(queue.isEmpty)
    }

    @Test("Inserts, cancels, earliest deadlines and due timers in any interleaving agree with a plain sorted list", arguments: [1, 2, 3])
    func agreesWithASortedList(seed: UInt64) {
        var generator = SeededGenerator(seed: seed)
        var queue = TimerHeap<ContinuousClock.Instant, UInt64>()
        // The reference: waiting timers as (deadline in ms, job), in the order they must come out; the
        // heap's id of each job.
        var model: [(deadline: Int, id: UInt64)] = []
        var ids: [UInt64: UInt64] = [:]
        var nextID: UInt64 = 1
        var now = 0
        for _ in 0..<20_000 {
            switch Int.random(in: 0..<10, using: &generator) {
            case 0..<4:
                let deadline = now + Int.random(in: 0..<50, using: &generator)
                ids[nextID] = queue.insert(deadline: at(deadline), job: nextID)
                model.append((deadline, nextID))
                model.sort { ($0.deadline, $0.id) < ($1.deadline, $1.id) }
                nextID += 1
            case 4..<6:
                // Cancel a waiting timer (the earliest one half the time), or one that is gone.
                let id: UInt64
                if model.isEmpty || Int.random(in: 0..<4, using: &generator) == 0 {
                    id = UInt64.random(in: 1...nextID, using: &generator)
                } else {
                    id = Bool.random(using: &generator) ? model[0].id : model.randomElement(using: &generator)!.id
                }
                let waited = model.contains { $0.id == id }
                // A job never scheduled gets an id no timer has had.
                let removed = queue.remove(id: ids[id] ?? UInt64.max)
                #expect((removed == id) == waited && (removed == nil) == !waited)
                model.removeAll { $0.id == id }
            case 6..<8:
                let earliest = queue.earliestDeadline()
                #expect(earliest == model.first.map { at($0.deadline) })
            default:
                now += Int.random(in: 0..<10, using: &generator)
                let due = queue.takeDue(at: at(now))
                let expected = model.prefix { $0.deadline <= now }.map(\.id)
                model.removeFirst(expected.count)
                #expect(due == expected)
            }
            #expect(queue.count == model.count)
        }
    }
}

