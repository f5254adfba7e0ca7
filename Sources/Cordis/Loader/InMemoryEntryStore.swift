import Synchronization

/// An `EntryStore` in memory: a node or a test whose plugin tree need not outlive the process.
public final class InMemoryEntryStore: EntryStore, Sendable {
    private struct State {
        var tree: EntryTree
        var saveFailure: (any Error & Sendable)?
        var loadFailure: (any Error & Sendable)?
        var saves = 0
    }

    private let state: Mutex<State>

    /// A store holding `tree`.
    public init(_ tree: EntryTree = EntryTree()) {
        state = Mutex(State(tree: tree))
    }

    /// A store holding the top-level `entries` (cordis-ios's `InMemoryEntryStore(_:)`).
    public convenience init(_ entries: [Entry]) {
        self.init(EntryTree(entries: entries))
    }

    /// The top-level entries as last saved (cordis-ios's `entries`).
    public var entries: [Entry] { stored.entries }

    /// The tree as last saved (or as given at creation).
    public var stored: EntryTree {
        state.withLock { $0.tree }
    }

    /// How many saves succeeded (cordis-ios's `saveCount`).
    public var saveCount: Int {
        state.withLock { $0.saves }
    }

    /// Makes every later save throw `error` (nil to succeed again), leaving the stored tree as it is.
    package func failSaves(with error: (any Error & Sendable)?) {
        state.withLock { $0.saveFailure = error }
    }

    /// Makes every later load throw `error` (nil to succeed again).
    package func failLoads(with error: (any Error & Sendable)?) {
        state.withLock { $0.loadFailure = error }
    }

    @_disfavoredOverload
    nonisolated public func load() throws -> EntryTree {
        try state.withLock { state in
            if let failure = state.loadFailure { throw failure }
            return state.tree
        }
    }

    @_disfavoredOverload
    nonisolated public func save(_ tree: EntryTree) throws {
        try state.withLock { state in
            if let failure = state.saveFailure { throw failure }
            try tree.validate()
            state.tree = tree
            state.saves += 1
        }
    }
}
