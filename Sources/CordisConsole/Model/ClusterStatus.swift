import CordisJSON
import CordisControl

/// The cluster as `status` reports it, decoded through the shared `NodeStatus` model into values the
/// renderers use. Unknown members are ignored; missing ones read as empty or null (see `NodeStatus`).
public struct ClusterStatus: Sendable, Hashable {
    /// One member.
    public struct Node: Sendable, Hashable {
        /// Its name.
        public var name: String
        /// The addresses it advertises.
        public var addresses: [String]
        /// Whether it answered this time.
        public var reachable: Bool
        /// Why not, when it did not.
        public var unreachableReason: String?
        /// Seconds since it was last heard from, when it did not answer (nil: never heard from).
        public var lastSeen: Double?
        /// Why it is degraded (etcd mode: its lease lost or etcd unreachable), when it is.
        public var degraded: String?
        /// Its Loader entries (the last known ones when it is not reachable).
        public var entries: [Entry]
        /// Its fibers (the last known ones when it is not reachable).
        public var fibers: [Fiber]
        /// Its health as the node reached sees it (`up`, `suspected`, `down`, `stopped`, `degraded`), nil
        /// from an older node.
        public var health: String? = nil

        /// `last seen N s ago` (whole seconds, rounded down), or `never seen`.
        public var lastSeenText: String {
            guard let lastSeen, lastSeen.isFinite else { return "never seen" }
            return "last seen \(Int(max(0, min(lastSeen, 1e15)).rounded(.down))) s ago"
        }
    }

    /// One Loader entry.
    public struct Entry: Sendable, Hashable {
        /// The entry id.
        public var id: String
        /// Its plugin (`group` for a group).
        public var plugin: String
        /// Its group, or nil at the top level.
        public var parent: String?
        /// Its own `disabled` flag.
        public var disabled: Bool
        /// Its fiber's state, nil without a fiber.
        public var state: String?
        /// Why it does not run, if it does not.
        public var error: String?
        /// Why its fiber is `pending` (`waits for counter → clock → counter`), nil when it is not.
        public var waiting: String? = nil
        /// Its config as stored (`{}` when it has none), nil when its node did not say (an older node).
        public var config: JSONValue? = nil
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
    }

    /// One fiber.
    public struct Fiber: Sendable, Hashable {
        /// Its id on its node.
        public var id: Int
        /// Its entry, nil when not Loader-made.
        public var entry: String?
        /// Its plugin's name (`remote:SERVICE` for a proxy).
        public var plugin: String
        /// Its state.
        public var state: String
        /// The services it provides, as `name` or `name@realm`.
        public var provides: [String]
        /// Injected service → the provider in use (nil when none).
        public var injects: [Injection]
        /// What a pending fiber waits for.
        public var missing: [String]
        /// The dependency cycle a pending fiber waits for (the repeated service last); empty when none.
        public var cycle: [String] = []
        /// Why it failed.
        public var error: String?
        /// For a proxy, the node whose provider it stands for; nil for any other fiber (and from an
        /// older node).
        public var origin: String? = nil

        /// Whether it is a proxy for a provider on another node.
        public var isProxy: Bool { plugin.hasPrefix("remote:") }
    }

    /// One injected service of a fiber and the provider in use.
    public struct Injection: Sendable, Hashable {
        /// The service name.
        public var service: String
        /// The provider in use, nil when none.
        public var provider: Provider?
    }

    /// The members, in the order the node reported them.
    public var nodes: [Node]

    /// Reads a `status` result (one object, or pages as `ControlClient` returns them).
    ///
    /// - Throws: `ConfigError` naming each member of the wrong JSON type, or a node without a name.
    public init(json: JSONValue) throws {
        let joined = StatusPaging.join(json)
        nodes = try JSONValueDecoder().decode([NodeStatus].self, from: joined["nodes"] ?? .array([])).map(Self.node(from:))
    }

    /// Whether `status` must exit 3: an unreachable or degraded member, a failed fiber, or an entry
    /// with an error.
    public var hasProblems: Bool {
        nodes.contains { node in
            !node.reachable || node.degraded != nil || node.fibers.contains { $0.state == "failed" } || node.entries.contains { $0.error != nil }
        }
    }

    private static func node(from status: NodeStatus) -> Node {
        Node(
            name: status.name, addresses: status.addresses, reachable: status.reachable,
            unreachableReason: status.unreachable, lastSeen: status.reachable ? nil : status.lastSeen,
            degraded: status.degraded,
            entries: status.entries.map { entry in
                Entry(id: entry.id, plugin: entry.plugin, parent: entry.parent, disabled: entry.disabled,
                      state: entry.state, error: entry.error, waiting: entry.waiting, config: entry.config)
            },
            fibers: status.fibers.map { fiber in
                Fiber(
                    id: fiber.fiber, entry: fiber.entry, plugin: fiber.plugin, state: fiber.state,
                    provides: fiber.provides.map { slot in slot.realm.map { "\(slot.service)@\($0)" } ?? slot.service },
                    injects: fiber.injects.map { injection in
                        Injection(service: injection.service, provider: injection.provider.map { provider in
                            Provider(node: provider.node, entry: provider.entry, fiber: provider.fiber, realm: provider.realm)
                        })
                    },
                    missing: fiber.missing, cycle: fiber.cycle, error: fiber.error, origin: fiber.origin)
            },
            health: status.health)
    }
}
