/// A list that keeps its first element inline and only allocates from the second on: a read of
/// the socket usually yields one frame, and the per-read lists of frames and of items to queue
/// then cost no allocation.
struct OneOrMore<Element>: Sequence {
    private var first: Element?
    private var rest: [Element] = []

    /// An empty list.
    init() {}

    var isEmpty: Bool { first == nil }

    mutating func append(_ element: Element) {
        if first == nil {
            first = element
        } else {
            rest.append(element)
        }
    }

    func makeIterator() -> Iterator {
        Iterator(first: first, rest: rest.makeIterator())
    }

    /// The elements in the order they were appended.
    struct Iterator: IteratorProtocol {
        fileprivate var first: Element?
        fileprivate var rest: IndexingIterator<[Element]>

        mutating func next() -> Element? {
            if let element = first {
                first = nil
                return element
            }
            return rest.next()
        }
    }
}
