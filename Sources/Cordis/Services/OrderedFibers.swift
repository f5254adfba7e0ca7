/// Fibers in the order they were added, each once: adding, removing and finding one by id take constant
/// time (amortized), and iteration follows the order of adding.
///
/// A slot's dependents are kept in it, so a provider that comes or goes reschedules its consumers in the
/// order they started (as cordis does), and a burst of reschedules walks them in the order their memory
/// was allocated rather than in hash order.
struct OrderedFibers {
    /// The fibers in the order they were added; a removed one leaves a hole until the next compaction.
    private var entries: [Fiber?] = []
    /// Each fiber's position in `entries`, by fiber id.
    private var positions: [Int: Int] = [:]

    /// The number of fibers.
    var count: Int { positions.count }

    /// Whether there is no fiber.
    var isEmpty: Bool { positions.isEmpty }

    /// The fibers, oldest first.
    var fibers: [Fiber] { entries.compactMap { $0 } }

    /// Adds `fiber` at the end, unless it is already here.
    mutating func insert(_ fiber: Fiber) {
        guard positions[fiber.id] == nil else { return }
        positions[fiber.id] = entries.count
        entries.append(fiber)
    }

    /// Removes the fiber with `id`, if it is here.
    mutating func remove(id: Int) {
        guard let position = positions.removeValue(forKey: id) else { return }
        entries[position] = nil
        if positions.isEmpty {
            entries.removeAll()
        } else if entries.count >= 16, positions.count < entries.count / 2 {
            compact()
        }
    }

    /// Drops the holes: at most once per as many removals as fibers remain, so removing costs constant
    /// time on average.
    private mutating func compact() {
        entries = entries.filter { $0 != nil }
        for (position, fiber) in entries.enumerated() {
            if let fiber { positions[fiber.id] = position }
        }
    }
}
