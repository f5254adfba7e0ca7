/// Fibers ordered by id, which is the order they started in, each once.
///
/// A fiber is usually added when it starts, with an id above every other here: adding appends it.
/// Removing one finds it by binary search and leaves a hole until the next compaction, so removing
/// costs logarithmic time (constant, amortized, for the compaction). There is no hash table: a world
/// of 100,000 fibers keeps one array of them, and walking it visits them in the order their memory was
/// allocated. A slot's dependents and the world's fibers are kept in one each, so a provider that
/// comes or goes reschedules its consumers in the order they started (as cordis does).
struct OrderedFibers {
    /// Every fiber here and the holes removals left, by ascending id.
    private var entries: [(id: Int, fiber: Fiber?)] = []

    /// The number of fibers.
    private(set) var count = 0

    /// Whether there is no fiber.
    var isEmpty: Bool { count == 0 }

    /// The fibers, by ascending id.
    var fibers: [Fiber] { entries.compactMap(\.fiber) }

    /// The fiber with `id`, if it is here.
    subscript(id: Int) -> Fiber? {
        let index = firstIndex(notBelow: id)
        return index < entries.count && entries[index].id == id ? entries[index].fiber : nil
    }

    /// Adds `fiber` in its place by id, unless it is already here.
    mutating func insert(_ fiber: Fiber) {
        let id = fiber.id
        guard let last = entries.last, last.id >= id else {
            entries.append((id, fiber))
            count += 1
            return
        }
        let index = firstIndex(notBelow: id)
        if index < entries.count, entries[index].id == id {
            guard entries[index].fiber == nil else { return }
            entries[index].fiber = fiber
        } else {
            entries.insert((id, fiber), at: index)
        }
        count += 1
    }

    /// Removes the fiber with `id`, if it is here.
    mutating func remove(id: Int) {
        let index = firstIndex(notBelow: id)
        guard index < entries.count, entries[index].id == id, entries[index].fiber != nil else { return }
        entries[index].fiber = nil
        count -= 1
        if count == 0 {
            entries.removeAll()
        } else if entries.count >= 16, count < entries.count / 2 {
            // At most once per as many removals as fibers remain.
            entries.removeAll { $0.fiber == nil }
        }
    }

    /// The position of the first entry whose id is `id` or above (`entries.count` if none).
    private func firstIndex(notBelow id: Int) -> Int {
        // Bounded: the range halves every pass.
        var low = 0
        var high = entries.count
        while low < high {
            let middle = (low + high) / 2
            if entries[middle].id < id { low = middle + 1 } else { high = middle }
        }
        return low
    }
}
