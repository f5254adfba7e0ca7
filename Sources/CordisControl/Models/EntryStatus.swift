import CordisJSON

/// One Loader entry in a member's status: `id`, `plugin`, `parent`, `disabled`, `config`, `state`,
/// `error`, in this order, with `null` for an absent parent, state (no fiber, as for a disabled entry) or
/// error, then `waiting` only while its fiber is `pending` for a reason (`waits for counter → clock →
/// counter` for a dependency cycle, `waits for clock` for a missing service). Older nodes never write
/// `waiting` or `config`; `config` is written only when known.
///
/// Decoding needs `id`; a missing `plugin` reads as `group`, other missing members as `false` or nil.
public struct EntryStatus: Sendable, Hashable, Codable {
    /// The entry id.
    public var id: String
    /// Its plugin (`group` for a group).
    public var plugin: String
    /// Its group, nil at the top level.
    public var parent: String?
    /// Its own `disabled` flag.
    public var disabled: Bool
    /// Its config as stored in the entries file (an `{"$env": …}` reference stays a reference; `{}`
    /// when the entry has none); nil when the node did not say (a node older than this field).
    public var config: JSONValue?
    /// Its fiber's state, nil without a fiber.
    public var state: String?
    /// Why it does not run, if it does not.
    public var error: String?
    /// Why its fiber is `pending`, nil when it is not (or the node is older than this field).
    public var waiting: String?

    /// The JSON members, in the order they are written.
    enum CodingKeys: String, CodingKey {
        case id, plugin, parent, disabled, config, state, error, waiting
    }

    /// Creates an entry status.
    public init(
        id: String, plugin: String, parent: String?, disabled: Bool, state: String?, error: String?,
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

    /// Decodes an entry. Throws `DecodingError` (with `JSONValueDecoder`, `ConfigError`).
    public init(from decoder: any Decoder) throws {
        let container = try ObjectKey.lenientContainer(of: decoder, keyedBy: CodingKeys.self)
        id = try container.decode(String.self, forKey: .id)
        plugin = try container.decodeIfPresent(String.self, forKey: .plugin) ?? "group"
        parent = try container.decodeIfPresent(String.self, forKey: .parent)
        disabled = try container.decodeIfPresent(Bool.self, forKey: .disabled) ?? false
        config = try container.decodeIfPresent(JSONValue.self, forKey: .config)
        state = try container.decodeIfPresent(String.self, forKey: .state)
        error = try container.decodeIfPresent(String.self, forKey: .error)
        waiting = try container.decodeIfPresent(String.self, forKey: .waiting)
    }

    /// Encodes the entry, writing `null` for each nil member but `config` and `waiting`, which are
    /// written only when set.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(plugin, forKey: .plugin)
        try container.encode(parent, forKey: .parent)
        try container.encode(disabled, forKey: .disabled)
        try container.encodeIfPresent(config, forKey: .config)
        try container.encode(state, forKey: .state)
        try container.encode(error, forKey: .error)
        try container.encodeIfPresent(waiting, forKey: .waiting)
    }
}
