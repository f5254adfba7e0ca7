import CordisJSON

/// One fiber in a member's status: what it provides, the provider it uses for each injected service,
/// and what a pending fiber waits for.
///
/// The JSON members, in order: `fiber`, `entry` (`null` when not Loader-made), `plugin`, `state`,
/// `provides` (`[{"service", "realm"}]`), `injects` (an object from each injected service, in order,
/// to its provider or `null`), `missing`, `waiting` (only when not empty: an object from a missing
/// service to the reason its providers do not fit), `cycle` (only when the fiber waits for a dependency
/// cycle: the chain of services, the repeated one last) and `error` (`null` when it did not fail).
///
/// Decoding needs `fiber`; a missing `plugin` or `state` reads as `?`, other missing members as empty
/// or nil. A provider object needs `node` and `fiber`.
public struct FiberStatus: Sendable, Hashable, Codable {
    /// A service a fiber provides, in a realm (nil: the root realm).
    public struct Slot: Sendable, Hashable, Codable {
        /// The service name.
        public var service: String
        /// The realm label, nil for the root realm.
        public var realm: String?

        /// The JSON members, in the order they are written.
        enum CodingKeys: String, CodingKey {
            case service, realm
        }

        /// Creates a slot.
        public init(service: String, realm: String?) {
            self.service = service
            self.realm = realm
        }

        /// Decodes a slot; needs `service`. Throws `DecodingError`.
        public init(from decoder: any Decoder) throws {
            let container = try ObjectKey.lenientContainer(of: decoder, keyedBy: CodingKeys.self)
            service = try container.decode(String.self, forKey: .service)
            realm = try container.decodeIfPresent(String.self, forKey: .realm)
        }

        /// Encodes the slot, `realm` as `null` for the root realm.
        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(service, forKey: .service)
            try container.encode(realm, forKey: .realm)
        }
    }

    /// The provider a fiber uses for one injected service.
    public struct Provider: Sendable, Hashable, Codable {
        /// The node of the provider.
        public var node: String
        /// Its entry, if Loader-made.
        public var entry: String?
        /// Its fiber id on that node.
        public var fiber: Int
        /// Its realm label, nil for the root realm.
        public var realm: String?

        /// The JSON members, in the order they are written.
        enum CodingKeys: String, CodingKey {
            case node, entry, fiber, realm
        }

        /// Creates a provider reference.
        public init(node: String, entry: String?, fiber: Int, realm: String?) {
            self.node = node
            self.entry = entry
            self.fiber = fiber
            self.realm = realm
        }

        /// Decodes a provider; needs `node` and `fiber`. Throws `DecodingError`.
        public init(from decoder: any Decoder) throws {
            let container = try ObjectKey.lenientContainer(of: decoder, keyedBy: CodingKeys.self)
            node = try container.decode(String.self, forKey: .node)
            entry = try container.decodeIfPresent(String.self, forKey: .entry)
            fiber = try container.decode(Int.self, forKey: .fiber)
            realm = try container.decodeIfPresent(String.self, forKey: .realm)
        }

        /// Encodes the provider, `entry` and `realm` as `null` when nil.
        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(node, forKey: .node)
            try container.encode(entry, forKey: .entry)
            try container.encode(fiber, forKey: .fiber)
            try container.encode(realm, forKey: .realm)
        }
    }

    /// One injected service and the provider in use (nil when none).
    public struct Injection: Sendable, Hashable {
        /// The service name.
        public var service: String
        /// The provider in use.
        public var provider: Provider?

        /// Creates an injection.
        public init(service: String, provider: Provider?) {
            self.service = service
            self.provider = provider
        }
    }

    /// Why the providers of a service a pending fiber misses do not fit.
    public struct Mismatch: Sendable, Hashable {
        /// The missing service.
        public var service: String
        /// Why its providers do not fit.
        public var reason: String

        /// Creates a mismatch.
        public init(service: String, reason: String) {
            self.service = service
            self.reason = reason
        }
    }

    /// Its id on its node.
    public var fiber: Int
    /// Its entry, nil when not Loader-made.
    public var entry: String?
    /// Its plugin's name (`remote:SERVICE` for a proxy).
    public var plugin: String
    /// For a proxy, the node whose provider it stands for; nil for any other fiber (and from an older
    /// node). Written after `plugin`, only when set.
    public var origin: String?
    /// Its state.
    public var state: String
    /// The services it provides.
    public var provides: [Slot]
    /// Its injected services, in order.
    public var injects: [Injection]
    /// What a pending fiber waits for.
    public var missing: [String]
    /// Why a missing service's providers do not fit, by service (only when there are any).
    public var waiting: [Mismatch]
    /// The dependency cycle a pending fiber waits for, first service first and the repeated one last
    /// (`["counter", "clock", "counter"]`); empty when it waits for none (or the node is older).
    public var cycle: [String]
    /// Why it failed.
    public var error: String?

    /// The JSON members, in the order they are written.
    enum CodingKeys: String, CodingKey {
        case fiber, entry, plugin, origin, state, provides, injects, missing, waiting, cycle, error
    }

    /// Creates a fiber status.
    public init(
        fiber: Int, entry: String?, plugin: String, state: String, provides: [Slot], injects: [Injection],
        missing: [String], waiting: [Mismatch] = [], cycle: [String] = [], error: String?, origin: String? = nil
    ) {
        self.origin = origin
        self.fiber = fiber
        self.entry = entry
        self.plugin = plugin
        self.state = state
        self.provides = provides
        self.injects = injects
        self.missing = missing
        self.waiting = waiting
        self.cycle = cycle
        self.error = error
    }

    /// Decodes a fiber. Throws `DecodingError` (with `JSONValueDecoder`, `ConfigError`).
    public init(from decoder: any Decoder) throws {
        let container = try ObjectKey.lenientContainer(of: decoder, keyedBy: CodingKeys.self)
        fiber = try container.decode(Int.self, forKey: .fiber)
        entry = try container.decodeIfPresent(String.self, forKey: .entry)
        plugin = try container.decodeIfPresent(String.self, forKey: .plugin) ?? "?"
        origin = try container.decodeIfPresent(String.self, forKey: .origin)
        state = try container.decodeIfPresent(String.self, forKey: .state) ?? "?"
        provides = try container.decodeIfPresent([Slot].self, forKey: .provides) ?? []
        injects = []
        if let services = try Self.object(.injects, in: container) {
            for key in services.allKeys {
                injects.append(Injection(service: key.stringValue, provider: try services.decodeIfPresent(Provider.self, forKey: key)))
            }
        }
        missing = try container.decodeIfPresent([String].self, forKey: .missing) ?? []
        waiting = []
        if let services = try Self.object(.waiting, in: container) {
            for key in services.allKeys {
                waiting.append(Mismatch(service: key.stringValue, reason: try services.decode(String.self, forKey: key)))
            }
        }
        cycle = try container.decodeIfPresent([String].self, forKey: .cycle) ?? []
        error = try container.decodeIfPresent(String.self, forKey: .error)
    }

    /// The object under `key`, nil when it is missing or `null`.
    private static func object(
        _ key: CodingKeys, in container: KeyedDecodingContainer<CodingKeys>
    ) throws -> KeyedDecodingContainer<ObjectKey>? {
        guard container.contains(key), try !container.decodeNil(forKey: key) else { return nil }
        return try container.nestedContainer(keyedBy: ObjectKey.self, forKey: key)
    }

    /// Encodes the fiber: `entry` and `error` as `null` when nil, `origin` only when set, `waiting` and
    /// `cycle` only when not empty.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(fiber, forKey: .fiber)
        try container.encode(entry, forKey: .entry)
        try container.encode(plugin, forKey: .plugin)
        try container.encodeIfPresent(origin, forKey: .origin)
        try container.encode(state, forKey: .state)
        try container.encode(provides, forKey: .provides)
        var services = container.nestedContainer(keyedBy: ObjectKey.self, forKey: .injects)
        for injection in injects { try services.encode(injection.provider, forKey: ObjectKey(injection.service)) }
        try container.encode(missing, forKey: .missing)
        if !waiting.isEmpty {
            var reasons = container.nestedContainer(keyedBy: ObjectKey.self, forKey: .waiting)
            for mismatch in waiting { try reasons.encode(mismatch.reason, forKey: ObjectKey(mismatch.service)) }
        }
        if !cycle.isEmpty { try container.encode(cycle, forKey: .cycle) }
        try container.encode(error, forKey: .error)
    }
}
