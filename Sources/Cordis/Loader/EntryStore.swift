/// Where a Loader keeps its entry tree between runs.
///
/// `load()` returns an empty tree when nothing was saved yet and throws when what was saved cannot be
/// read; `save(_:)` replaces the stored tree entirely or, when it throws, leaves it as it was.
///
/// A store implements one of two pairs: `load() -> EntryTree` and `save(_: EntryTree)` (this package's
/// form, which keeps the file's version and unknown fields), or `load() -> [Entry]` and
/// `save(_: [Entry])` (cordis-ios's form, a plain list of top-level entries). Each pair has a default
/// written over the other, so a Loader works with either; a store that implements neither throws
/// `EntryStoreError` `incomplete` from both.
///
/// The requirements are isolated to `CordisActor`, where the Loader calls them, as in cordis-ios: a
/// `@CordisActor` class can be a store, and a store whose methods are `nonisolated` (a struct, such as
/// `FileEntryStore`) can be called from anywhere through its own type.
public protocol EntryStore: Sendable {
    /// The stored tree, or an empty one when none was saved. Throws when it cannot be read or parsed.
    /// `try store.load()` without a type reads `[Entry]`; write `try store.load() as EntryTree` for this.
    @_disfavoredOverload
    @CordisActor func load() throws -> EntryTree
    /// Replaces the stored tree. Throws, leaving the stored tree unchanged, when it cannot be saved.
    @_disfavoredOverload
    @CordisActor func save(_ tree: EntryTree) throws
    /// The stored top-level entries, or none when nothing was saved.
    @CordisActor func load() throws -> [Entry]
    /// Replaces the stored entries.
    @CordisActor func save(_ entries: [Entry]) throws
}

@CordisActor
extension EntryStore {
    /// The stored tree's top-level entries.
    public func load() throws -> [Entry] {
        try EntryStoreForwarding.forward(for: Self.self) { try (load() as EntryTree).entries }
    }

    /// Saves `entries` as a tree of this version.
    public func save(_ entries: [Entry]) throws {
        try EntryStoreForwarding.forward(for: Self.self) { try save(EntryTree(entries: entries)) }
    }

    /// The entries of a store written in cordis-ios's form, as a tree.
    @_disfavoredOverload
    public func load() throws -> EntryTree {
        try EntryStoreForwarding.forward(for: Self.self) { EntryTree(entries: try load() as [Entry]) }
    }

    /// Saves the tree's top-level entries through a store written in cordis-ios's form (the tree's
    /// unknown top-level fields are not kept by such a store).
    @_disfavoredOverload
    public func save(_ tree: EntryTree) throws {
        try EntryStoreForwarding.forward(for: Self.self) { try save(tree.entries) }
    }
}

/// Keeps the defaults of `EntryStore` from calling each other for ever in a store that implements
/// neither pair: a default entered again for the same store type throws instead.
enum EntryStoreForwarding {
    @TaskLocal static var forwarding: Set<ObjectIdentifier> = []

    static func forward<T>(for store: Any.Type, _ body: () throws -> T) throws -> T {
        let key = ObjectIdentifier(store)
        guard !forwarding.contains(key) else {
            throw EntryStoreError(
                code: .incomplete, path: "\(store)",
                message: "entry store \(store) implements neither load() -> EntryTree and save(_: EntryTree) "
                    + "nor load() -> [Entry] and save(_: [Entry]); implement one pair")
        }
        var inside = forwarding
        inside.insert(key)
        return try $forwarding.withValue(inside) { try body() }
    }
}
