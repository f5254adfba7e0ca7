/// Looking up which entry a fiber belongs to.
extension Loader {
    /// The id of the entry whose fiber `fiber` is, or of the nearest ancestor fiber that belongs to an
    /// entry; nil for fibers the Loader did not make.
    public func entryID(for fiber: Fiber) -> String? {
        var current: Fiber? = fiber
        var depth = 0
        while let candidate = current, depth < 10_000 {
            if let id = entryOfFiber[candidate.id] { return id }
            current = candidate.startedFromFiber
            depth += 1
        }
        return nil
    }
}
