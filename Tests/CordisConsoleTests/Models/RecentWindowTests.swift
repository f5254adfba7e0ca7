import CordisControl
import Testing

/// `RecentWindow`: the last elements appended, oldest first, whatever the number appended.
@Suite("Recent window")
struct RecentWindowTests {
    @Test("Keeps every element until full, then the newest ones, oldest first, at every count")
    func keepsTheNewest() {
        var window = RecentWindow<Int>(capacity: 4)
        #expect(window.elements.isEmpty)
        for count in 1...11 {
            window.append(count)
            let kept = Array(max(1, count - 3)...count)
            #expect(window.elements == kept, "after \(count)")
            #expect(window.count == kept.count)
        }
    }

    @Test("A window of capacity 1 holds the last element; of capacity 0 or less, none")
    func smallCapacities() {
        var one = RecentWindow<String>(capacity: 1)
        one.append("a")
        one.append("b")
        #expect(one.elements == ["b"])
        var none = RecentWindow<String>(capacity: 0)
        none.append("a")
        #expect(none.elements.isEmpty && none.count == 0)
        var negative = RecentWindow<String>(capacity: -3)
        negative.append("a")
        #expect(negative.elements.isEmpty && negative.capacity == 0)
    }
}
