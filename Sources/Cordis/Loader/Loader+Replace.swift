extension Loader {
    /// Replaces the whole tree with `tree` in one change: validated like any change (ids, plugins and
    /// configs of the entries that will run), saved atomically, then reconciled by id.
    ///
    /// - Throws: `LoaderError` (`invalid-id`, `duplicate-id`, `unknown-plugin`, `invalid-config`,
    ///   `limit-exceeded`, `save-failed`); nothing changed then, neither the stored tree nor the fibers.
    public func replace(with tree: EntryTree) async throws {
        try await change { _ in
            do {
                try tree.validate()
            } catch let error as EntryError {
                throw LoaderError(error: error)
            }
            return (tree, tree.allEntries.map(\.entry.id))
        }
    }

    /// Replaces the whole tree with `entries` (cordis-ios's `reconcile(_:)`), as `replace(with:)` does.
    public func reconcile(_ entries: [Entry]) async throws {
        try await replace(with: EntryTree(entries: entries))
    }

    /// The entry with `id`, wherever it is in the tree (cordis-ios's spelling of `entry(id:)`).
    public func entry(_ id: String) -> Entry? { entry(id: id) }
}
