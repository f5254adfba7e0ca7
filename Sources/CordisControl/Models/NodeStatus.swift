import CordisJSON

/// One member in a `status` result: its entries and fibers, and whether it answered. The node builds
/// it and encodes it with `JSONValueEncoder`; a console decodes it back with `JSONValueDecoder`. The
/// JSON is the `status --json` shape, member for member and in this order, with `null` for an absent
/// incarnation or version, `unreachable` only when set, and `lastSeen` (a number or `null`) only for a
/// member that is not reachable, then `health` when the node that answered sends it.
///
/// Decoding needs `name`; other missing members read as empty, `false` or nil, members it does not
/// know are ignored, and a member of the wrong JSON type is an error (`ConfigError` naming its path).
public struct NodeStatus: Sendable, Hashable, Codable {
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
    /// Seconds since it was last heard from, for a member that is not reachable; nil when it never was
    /// (or when it is reachable). Setting it (nil included) writes `lastSeen` for an unreachable member.
    public var lastSeen: Double? {
        get { lastSeenMember ?? nil }
        set { lastSeenMember = .some(newValue) }
    }
    /// `lastSeen` as read or set: nil when absent (an older node's status keeps its shape), `.some(nil)`
    /// for `null`.
    private var lastSeenMember: Double??
    /// Why it is degraded (etcd mode: its lease lost or etcd unreachable), when it is.
    public var degraded: String?
    /// Its etcd lease while it holds one (etcd mode), nil otherwise (and from an older node).
    public var lease: LeaseStatus?
    /// Its health as the node that answered sees it (`up`, `suspected`, `down`, `stopped`, `degraded`:
    /// the same word `members` says), nil from an older node.
    public var health: String?

    /// The JSON members, in the order they are written.
    enum CodingKeys: String, CodingKey {
        case name, addresses, incarnation, version, reachable, entries, fibers, unreachable
        case lastSeen, degraded, lease, health
    }

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

    /// Decodes a member's status. Throws `DecodingError` (with `JSONValueDecoder`, `ConfigError`).
    public init(from decoder: any Decoder) throws {
        let container = try ObjectKey.lenientContainer(of: decoder, keyedBy: CodingKeys.self)
        name = try container.decode(String.self, forKey: .name)
        addresses = try container.decodeIfPresent([String].self, forKey: .addresses) ?? []
        incarnation = try container.decodeIfPresent(String.self, forKey: .incarnation)
        version = try container.decodeIfPresent(String.self, forKey: .version)
        reachable = try container.decodeIfPresent(Bool.self, forKey: .reachable) ?? false
        entries = try container.decodeIfPresent([EntryStatus].self, forKey: .entries) ?? []
        fibers = try container.decodeIfPresent([FiberStatus].self, forKey: .fibers) ?? []
        unreachable = try container.decodeIfPresent(String.self, forKey: .unreachable)
        if container.contains(.lastSeen) { lastSeenMember = .some(try container.decodeIfPresent(Double.self, forKey: .lastSeen)) }
        degraded = try container.decodeIfPresent(String.self, forKey: .degraded)
        lease = try container.decodeIfPresent(LeaseStatus.self, forKey: .lease)
        health = try container.decodeIfPresent(String.self, forKey: .health)
    }

    /// Encodes the status: `incarnation` and `version` as `null` when nil, `unreachable` only when set,
    /// `lastSeen` (`null` when nil) only when not reachable and read or set.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(name, forKey: .name)
        try container.encode(addresses, forKey: .addresses)
        try container.encode(incarnation, forKey: .incarnation)
        try container.encode(version, forKey: .version)
        try container.encode(reachable, forKey: .reachable)
        try container.encode(entries, forKey: .entries)
        try container.encode(fibers, forKey: .fibers)
        try container.encodeIfPresent(unreachable, forKey: .unreachable)
        if !reachable, let lastSeenMember { try container.encode(lastSeenMember, forKey: .lastSeen) }
        try container.encodeIfPresent(degraded, forKey: .degraded)
        try container.encodeIfPresent(lease, forKey: .lease)
        try container.encodeIfPresent(health, forKey: .health)
    }
}

/// A node's etcd lease, as its status reports it.
public struct LeaseStatus: Codable, Sendable, Hashable {
    /// The lease's id, as 16 hexadecimal digits (what `etcdctl lease list` shows, in hexadecimal).
    public var id: String
    /// Its time to live, in seconds (renewed at a third of it).
    public var ttl: Double

    /// Creates a lease status.
    public init(id: String, ttl: Double) {
        self.id = id
        self.ttl = ttl
    }
}
