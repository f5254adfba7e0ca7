/// One change the Loader made to an entry: the payload of the `loader/entry` event.
///
/// A change that touches several aspects of an entry emits one event per aspect, in the order of `Kind`.
public struct EntryChange: Sendable, Hashable, CustomStringConvertible {
    /// What changed about an entry.
    public enum Kind: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
        /// The entry appeared in the tree.
        case added
        /// The entry left the tree.
        case removed
        /// Its plugin changed (or it became or stopped being a group).
        case plugin
        /// It moved to another group (or to or from the top level).
        case moved
        /// Its `isolate` map changed.
        case isolate
        /// Its `inject` list changed (the services its fiber injects beside its plugin's own).
        case inject
        /// Its `intercept` map changed (the per-service configuration of its context and subtree).
        case intercept
        /// Its config changed.
        case config
        /// Its `disabled` flag was cleared.
        case enabled
        /// Its `disabled` flag was set.
        case disabled

        /// The kind's name.
        public var description: String { rawValue }
    }

    /// The entry's id.
    public let id: String
    /// What changed.
    public let kind: Kind

    /// Creates a change.
    public init(id: String, kind: Kind) {
        self.id = id
        self.kind = kind
    }

    /// `id: kind`.
    public var description: String { "\(id): \(kind)" }
}

/// `loader/entry`: the Loader changed an entry (emitted on the Loader's context):
/// `loader.ctx.on(LoaderEntryEvent.self) { change in … }`.
public enum LoaderEntryEvent: EventKey {
    /// The entry and what happened to it.
    public typealias Args = EntryChange
    /// It never bails.
    public typealias Result = Never
    /// `loader/entry`.
    public static var name: String { "loader/entry" }
}

extension Event where Payload == EntryChange, Result == Void {
    /// `loader/entry`: the Loader changed an entry (emitted on the Loader's context).
    @available(*, deprecated, message: "listen with on(LoaderEntryEvent.self)")
    public static var loaderEntry: Self { entryChanged }

    static var entryChanged: Self { Self(named: LoaderEntryEvent.name) }
}
