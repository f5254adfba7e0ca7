/// Where a Loader keeps its entry tree between runs.
///
/// `load()` returns an empty tree when nothing was saved yet and throws when what was saved cannot be
/// read; `save(_:)` replaces the stored tree entirely or, when it throws, leaves it as it was.
public protocol EntryStore: Sendable {
    /// The stored tree, or an empty one when none was saved. Throws when it cannot be read or parsed.
    func load() throws -> EntryTree
    /// Replaces the stored tree. Throws, leaving the stored tree unchanged, when it cannot be saved.
    func save(_ tree: EntryTree) throws
}
