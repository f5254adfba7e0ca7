@testable import CordisWire
import CordisProcessTesting
import Testing

/// The loop's timer queue: earliest first, cancellation, and a bound on what cancelled timers keep.
@Suite("Event loop timer queue")
struct TimerQueueTests {
    private let origin = ContinuousClock.now

    private func at(_ milliseconds: Int) -> ContinuousClock.Instant {
        origin.advanced(by: .milliseconds(milliseconds))
    }

    @Test("Due timers come out earliest first, ties in the order they were scheduled; later ones wait")
    func dueInOrder() {
        var queue = TimerQueue<Int>()
        // Deadlines shuffled, two ties (ids 4 and 6 at 30 ms, 2 and 7 at 10 ms).
        let deadlines = [1: 50, 2: 10, 3: 40, 4: 30, 5: 90, 6: 30, 7: 10, 8: 20]
        for id in deadlines.keys.sorted() { queue.insert(id: UInt64(id), deadline: at(deadlines[id]!), job: id) }
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
        var queue = TimerQueue<Int>()
        queue.insert(id: 1, deadline: at(10), job: 1)
        queue.insert(id: 2, deadline: at(20), job: 2)
        queue.insert(id: 3, deadline: at(30), job: 3)
        let once = queue.remove(id: 1)
        let twice = queue.remove(id: 1)
        let unknown = queue.remove(id: 99)
        #expect(once && !twice && !unknown)
        let earliest = queue.earliestDeadline()
        #expect(earliest == at(20))
        let third = queue.remove(id: 3)
        let due = queue.takeDue(at: at(100))
        #expect(third && due == [2])
        let none = queue.earliestDeadline()
        #expect(none == nil)
        queue.insert(id: 4, deadline: at(5), job: 4)
        queue.removeAll()
        let afterAll = queue.takeDue(at: at(100))
        #expect(queue.isEmpty && afterAll.isEmpty)
    }

    @Test("Calls that each arm and cancel a far timeout (100,000 of them, 64 live at a time) keep the heap bounded and the order right")
    func cancelledTimersAreBounded() {
        var queue = TimerQueue<UInt64>()
        // The heartbeat: one near timer that stays.
        queue.insert(id: 0, deadline: at(500), job: 0)
        var live: [UInt64] = []
        var largest = 0
        var cancelled = 0
        for id in UInt64(1)...100_000 {
            queue.insert(id: id, deadline: at(30_000 + Int(id % 1_000)), job: id)
            live.append(id)
            if live.count > 64, queue.remove(id: live.removeFirst()) { cancelled += 1 }
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
        #expect(Set(due) == Set([0] + live))
        let deadlines = due.dropFirst().map { 30_000 + Int($0 % 1_000) }
        #expect(deadlines == deadlines.sorted())
        #expect(queue.isEmpty)
    }

    @Test("Inserts, cancels, earliest deadlines and due timers in any interleaving agree with a plain sorted list", arguments: [1, 2, 3])
    func agreesWithASortedList(seed: UInt64) {
        var generator = SeededGenerator(seed: seed)
        var queue = TimerQueue<UInt64>()
        // The reference: waiting timers as (deadline in ms, id), in the order they must come out.
        var model: [(deadline: Int, id: UInt64)] = []
        var nextID: UInt64 = 1
        var now = 0
        for _ in 0..<20_000 {
            switch Int.random(in: 0..<10, using: &generator) {
            case 0..<4:
                let deadline = now + Int.random(in: 0..<50, using: &generator)
                queue.insert(id: nextID, deadline: at(deadline), job: nextID)
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
                let removed = queue.remove(id: id)
                #expect(removed == waited)
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

