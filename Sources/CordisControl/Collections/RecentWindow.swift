/// The last `capacity` elements appended, oldest first. Appending costs the same however many are
/// kept: once full, the newest element takes the oldest one's place in a ring.
package struct RecentWindow<Element> {
    /// How many elements are kept at most.
    package let capacity: Int
    /// The elements, in the order appended until full; from then on a ring whose oldest is at `oldest`.
    private var storage: [Element] = []
    /// Where the oldest element is, once `storage` is full.
    private var oldest = 0

    /// An empty window keeping at most `capacity` elements (none when `capacity` is 0 or less).
    package init(capacity: Int) {
        self.capacity = max(0, capacity)
    }

    /// Appends `element`, dropping the oldest when the window is full.
    package mutating func append(_ element: Element) {
        guard capacity > 0 else { return }
        if storage.count < capacity {
            storage.append(element)
        } else {
            storage[oldest] = element
            oldest = oldest + 1 == capacity ? 0 : oldest + 1
        }
    }

    /// How many elements the window holds.
    package var count: Int { storage.count }

    /// The elements, oldest first.
    package var elements: [Element] {
        oldest == 0 ? storage : Array(storage[oldest...]) + storage[..<oldest]
    }
}
