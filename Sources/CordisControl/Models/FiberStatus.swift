import CordisJSON

/// One fiber in a member's status: what it provides, the provider it uses for each injected service,
/// and what a pending fiber waits for.
public struct FiberStatus: Sendable, Hashable {
    /// A service a fiber provides, in a realm (nil: the root realm).
    public struct Slot: Sendable, Hashable {
        /// The service name.
        public var service: String
        /// The realm label, nil for the root realm.
        public var realm: String?

        /// Creates a slot.
        public init(service: String, realm: String?) {
            self.service = service
            self.realm = realm
        }
    }

    /// The provider a fiber uses for one injected service.
    public struct Provider: Sendable, Hashable {
        /// The node of the provider.
        public var node: String
        /// Its entry, if Loader-made.
        public var entry: String?
        /// Its fiber id on that node.
        public var fiber: Int
        /// Its realm label, nil for the root realm.
        public var realm: String?

        /// Creates a provider reference.
        public init(node: String, entry: String?, fiber: Int, realm: String?) {
            self.node = node
            self.entry = entry
            self.fiber = fiber
            self.realm = realm
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

    /// Its id on its node.
    public var fiber: Int
    /// Its entry, nil when not Loader-made.
    public var entry: String?
    /// Its plugin's name (`remote:SERVICE` for a proxy).
    public var plugin: String
    /// Its state.
    public var state: String
    /// The services it provides.
    public var provides: [Slot]
    /// Its injected services, in order.
    public var injects: [Injection]
    /// What a pending fiber waits for.
    public var missing: [String]
    /// Why a missing service's providers do not fit, by service (only when there are any).
    public var waiting: [(service: String, reason: String)]
    /// Why it failed.
    public var error: String?

    /// Creates a fiber status.
    public init(
        fiber: Int, entry: String?, plugin: String, state: String, provides: [Slot], injects: [Injection],
        missing: [String], waiting: [(service: String, reason: String)] = [], error: String?
    ) {
        self.fiber = fiber
        self.entry = entry
        self.plugin = plugin
        self.state = state
        self.provides = provides
        self.injects = injects
        self.missing = missing
        self.waiting = waiting
        self.error = error
    }

    /// The JSON object (`waiting` only when not empty).
    public var json: JSONValue {
        var object: JSONObject = [
            "fiber": .integer(fiber), "entry": entry.map { .string($0) } ?? .null, "plugin": .string(plugin),
            "state": .string(state),
            "provides": .array(provides.map { .object(["service": .string($0.service), "realm": $0.realm.map { .string($0) } ?? .null]) }),
            "injects": .object(JSONObject(injects.map { injection in
                (injection.service, injection.provider.map { provider in
                    .object([
                        "node": .string(provider.node), "entry": provider.entry.map { .string($0) } ?? .null,
                        "fiber": .integer(provider.fiber), "realm": provider.realm.map { .string($0) } ?? .null,
                    ])
                } ?? .null)
            })),
            "missing": .array(missing.map { .string($0) }),
        ]
        if !waiting.isEmpty {
            object["waiting"] = .object(JSONObject(waiting.map { ($0.service, .string($0.reason)) }))
        }
        object["error"] = error.map { .string($0) } ?? .null
        return .object(object)
    }

    /// Reads a fiber; nil without a fiber id.
    public init?(json: JSONValue) {
        guard let fiber = json["fiber"]?.intValue else { return nil }
        self.fiber = fiber
        entry = json["entry"]?.stringValue
        plugin = json["plugin"]?.stringValue ?? "?"
        state = json["state"]?.stringValue ?? "?"
        provides = (json["provides"]?.arrayValue ?? []).compactMap { slot in
            slot["service"]?.stringValue.map { Slot(service: $0, realm: slot["realm"]?.stringValue) }
        }
        injects = (json["injects"]?.objectValue ?? JSONObject()).map { member in
            let value = member.value
            guard let node = value["node"]?.stringValue, let fiber = value["fiber"]?.intValue else {
                return Injection(service: member.key, provider: nil)
            }
            return Injection(service: member.key, provider: Provider(
                node: node, entry: value["entry"]?.stringValue, fiber: fiber, realm: value["realm"]?.stringValue))
        }
        missing = (json["missing"]?.arrayValue ?? []).compactMap(\.stringValue)
        waiting = (json["waiting"]?.objectValue ?? JSONObject()).compactMap { member in
            member.value.stringValue.map { (member.key, $0) }
        }
        error = json["error"]?.stringValue
    }

    /// Equal when their JSON is.
    public static func == (lhs: FiberStatus, rhs: FiberStatus) -> Bool { lhs.json == rhs.json }
    /// Hashes the JSON.
    public func hash(into hasher: inout Hasher) { hasher.combine(json) }
}
