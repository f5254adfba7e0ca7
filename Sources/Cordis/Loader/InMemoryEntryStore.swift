import Foundation

/// An `EntryStore` in memory: a node or a test whose plugin tree need not outlive the process.
public final class InMemoryEntryStore: EntryStore, @unchecked Sendable {
    // Every stored property below is read and written only while holding `lock`.
    private let lock = NSLock()
    private var tree: EntryTree
    private var saveFailure: (any Error & Sendable)?
    private var loadFailure: (any Error & Sendable)?
    private var saves = 0

    /// A store holding `tree`.
    public init(_ tree: EntryTree = EntryTree()) {
        self.tree = tree
    }

    /// The tree as last saved (or as given at creation).
    public var stored: EntryTree {
        lock.withLock { tree }
    }

    /// How many saves succeeded.
    package var saveCount: Int {
        lock.withLock { saves }
    }

    /// Makes every later save throw `error` (nil to succeed again), leaving the stored tree as it is.
    package func failSaves(with error: (any Error & Sendable)?) {
        lock.withLock { saveFailure = error }
    }

    /// Makes every later load throw `error` (nil to succeed again).
    package func failLoads(with error: (any Error & Sendable)?) {
        lock.withLock { loadFailure = error }
    }

    public func load() throws -> EntryTree {
        try lock.withLock {
            if let loadFailure { throw loadFailure }
            return tree
        }
    }

    public func save(_ tree: EntryTree) throws {
        try lock.withLock {
            if let saveFailure { throw saveFailure }
            try tree.validate()
            self.tree = tree
            saves += 1
        }
    }
}
