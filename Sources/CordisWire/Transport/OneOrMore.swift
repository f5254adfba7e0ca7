/// A list that keeps its first element inline and only allocates from the second on: a read of
/// the socket usually yields one frame, and the per-read lists of frames and of items to queue
/// then cost no allocation.
package struct OneOrMore<Element>: Sequence {
    private var first: Element?
    private var rest: [Element] = []

    /// An empty list.
    package init() {}

    package var isEmpty: Bool { first == nil }

    package mutating func append(_ element: Element) {
        if first == nil {
            first = element
        } else {
            rest.append(element)
        }
    }

    package func makeIterator() -> Iterator {
        Iterator(first: first, rest: rest.makeIterator())
    }

    /// The elements in the order they were appended.
    package struct Iterator: IteratorProtocol {
        fileprivate var first: Element?
        fileprivate var rest: IndexingIterator<[Element]>

        package mutating func next() -> Element? {
            if let element = first {
                first = nil
                return element
            }
            return rest.next()
        }
    }
}

extension OneOrMore: Sendable where Element: Sendable {}
