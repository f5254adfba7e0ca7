import CordisJSON

/// One member in a `status` result: its entries and fibers, and whether it answered. The node builds
/// it and sends `json`; a console reads it back with `init(json:)`. The JSON is the `status --json`
/// shape, member for member and in this order.
public struct NodeStatus: Sendable, Hashable {
    /// The member's name.
    public var name: String
    /// The addresses it advertises.
    public var addresses: [String]
    /// Its incarnation, nil when never seen.
    public var incarnation: String?
    /// Its Cordis version, nil when never seen.
    public var version: String?
    /// Whether it answered this time.
    public var reachable: Bool
    /// Its Loader entries.
    public var entries: [EntryStatus]
    /// Its fibers.
    public var fibers: [FiberStatus]
    /// Why it did not answer, when it did not.
    public var unreachable: String?

    /// Creates a status.
    public init(
        name: String, addresses: [String], incarnation: String?, version: String?, reachable: Bool,
        entries: [EntryStatus], fibers: [FiberStatus], unreachable: String? = nil
    ) {
        self.name = name
        self.addresses = addresses
        self.incarnation = incarnation
        self.version = version
        self.reachable = reachable
        self.entries = entries
        self.fibers = fibers
        self.unreachable = unreachable
    }

    /// The JSON object (`unreachable` only when set).
    public var json: JSONValue {
        var object: JSONObject = [
            "name": .string(name), "addresses": .array(addresses.map { .string($0) }),
            "incarnation": incarnation.map { .string($0) } ?? .null, "version": version.map { .string($0) } ?? .null,
            "reachable": .bool(reachable), "entries": .array(entries.map(\.json)), "fibers": .array(fibers.map(\.json)),
        ]
        if let unreachable { object["unreachable"] = .string(unreachable) }
        return .object(object)
    }

    /// Reads a member's status; nil without a name. Missing members read as empty or null.
    public init?(json: JSONValue) {
        guard let name = json["name"]?.stringValue else { return nil }
        self.name = name
        addresses = (json["addresses"]?.arrayValue ?? []).compactMap(\.stringValue)
        incarnation = json["incarnation"]?.stringValue
        version = json["version"]?.stringValue
        reachable = json["reachable"]?.boolValue ?? false
        entries = (json["entries"]?.arrayValue ?? []).compactMap(EntryStatus.init(json:))
        fibers = (json["fibers"]?.arrayValue ?? []).compactMap(FiberStatus.init(json:))
        unreachable = json["unreachable"]?.stringValue
    }
}

/// One Loader entry in a member's status.
public struct EntryStatus: Sendable, Hashable {
    /// The entry id.
    public var id: String
    /// Its plugin (`group` for a group).
    public var plugin: String
    /// Its group, nil at the top level.
    public var parent: String?
    /// Its own `disabled` flag.
    public var disabled: Bool
    /// Its fiber's state, nil without a fiber.
    public var state: String?
    /// Why it does not run, if it does not.
    public var error: String?

    /// Creates an entry status.
    public init(id: String, plugin: String, parent: String?, disabled: Bool, state: String?, error: String?) {
        self.id = id
        self.plugin = plugin
        self.parent = parent
        self.disabled = disabled
        self.state = state
        self.error = error
    }

    /// The JSON object.
    public var json: JSONValue {
        .object([
            "id": .string(id), "plugin": .string(plugin), "parent": parent.map { .string($0) } ?? .null,
            "disabled": .bool(disabled), "state": state.map { .string($0) } ?? .null,
            "error": error.map { .string($0) } ?? .null,
        ])
    }

    /// Reads an entry; nil without an id.
    public init?(json: JSONValue) {
        guard let id = json["id"]?.stringValue else { return nil }
        self.id = id
        plugin = json["plugin"]?.stringValue ?? "group"
        parent = json["parent"]?.stringValue
        disabled = json["disabled"]?.boolValue ?? false
        state = json["state"]?.stringValue
        error = json["error"]?.stringValue
    }
}
