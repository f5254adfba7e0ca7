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
                let code: LoaderError.Code = error.code == .duplicateID ? .duplicateID : .invalidID
                throw LoaderError(code, entryID: error.entryID, error.message, underlying: error)
            }
            return (tree, tree.allEntries.map(\.entry.id))
        }
    }
}
