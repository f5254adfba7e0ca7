import CordisJSON

/// What the Loader knows about one entry: where it sits, whether it runs, and why not.
public struct EntryStatus: Sendable, Hashable {
    /// The entry's id.
    public let id: String
    /// Its plugin's catalog name (`group` for a group).
    public let plugin: String
    /// The id of its group, or nil at the top level.
    public let parent: String?
    /// Its own `disabled` flag (an entry under a disabled group has no fiber even when this is false).
    public let disabled: Bool
    /// Its fiber's state, or nil when it has no fiber (disabled, or not startable).
    public let state: FiberState?
    /// Why it does not run, or the error its fiber failed with: `plugin "x" is not in the catalog`,
    /// `invalid config: …`; nil otherwise.
    public let error: String?
    /// Why its fiber is `pending` (`waits for clock → greeter → clock` for a dependency cycle, `waits for
    /// clock` for a missing service); nil otherwise.
    public let waiting: String?
    /// Its config as the entry holds it (environment references stay references); nil when it has none.
    public let config: JSONValue?

    /// Creates a status line.
    public init(
        id: String, plugin: String, parent: String?, disabled: Bool, state: FiberState?, error: String?,
        waiting: String? = nil, config: JSONValue? = nil
    ) {
        self.id = id
        self.plugin = plugin
        self.parent = parent
        self.disabled = disabled
        self.state = state
        self.error = error
        self.waiting = waiting
        self.config = config
    }
}
