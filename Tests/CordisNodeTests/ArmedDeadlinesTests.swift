@testable import CordisNode
import Testing

/// `ArmedDeadlines`, the withdrawal deadlines a node arms on its event loop: a timer that fired is
/// reported only while its arming is the one still armed.
@Suite("Withdrawal deadlines on the loop: a cancelled or replaced deadline never passes")
struct ArmedDeadlinesTests {
    @Test("a deadline cancelled after its timer fired, then armed again for the same life: the stale firing is dropped, the new one passes once")
    func staleFiringIsDropped() {
        var deadlines = ArmedDeadlines()
        var numbers: [Int] = []
        #expect(deadlines.arm(life: 7) { numbers.append($0); return 100 } == nil)
        // The timer of the first arming fires on the loop; before its report reaches the actor the
        // withdrawal ends (cancel) and a new withdrawal of life 7 arms again.
        #expect(deadlines.cancel(life: 7) == 100)
        #expect(deadlines.arm(life: 7) { numbers.append($0); return 101 } == nil)
        #expect(deadlines.fired(life: 7, number: numbers[0]) == false)
        #expect(deadlines.isArmed(life: 7))
        #expect(deadlines.fired(life: 7, number: numbers[1]) == true)
        #expect(deadlines.fired(life: 7, number: numbers[1]) == false)
        #expect(!deadlines.isArmed(life: 7))
    }

    @Test("a deadline armed while one of the same life is armed replaces it, whose timer is handed back to cancel")
    func rearmingReplaces() {
        var deadlines = ArmedDeadlines()
        var numbers: [Int] = []
        _ = deadlines.arm(life: 1) { numbers.append($0); return 10 }
        _ = deadlines.arm(life: 2) { numbers.append($0); return 20 }
        #expect(deadlines.arm(life: 1) { numbers.append($0); return 11 } == 10)
        #expect(deadlines.fired(life: 1, number: numbers[0]) == false)
        #expect(deadlines.fired(life: 2, number: numbers[1]) == true)
        #expect(deadlines.cancel(life: 1) == 11)
        #expect(deadlines.cancel(life: 1) == nil)
    }
}
