import Cordis
import Foundation

/// The node program a cluster runs.
public struct NodeExecutable: Sendable, Hashable {
    /// The program's path.
    public var url: URL

    /// The program at `url`.
    public init(url: URL) { self.url = url }

    /// The executable product `name` of the package under test, built next to the test bundle
    /// (`.build/debug/NAME`). The test target must depend on it, so that `swift test` builds it.
    public static func product(_ name: String) -> NodeExecutable {
        NodeExecutable(url: productsDirectory.appendingPathComponent(name))
    }

    /// The built `cordis-node`, with the built-in catalog (clock, counter, greeter, badge, flaky).
    public static var cordisNode: NodeExecutable { product("cordis-node") }

    /// Where the built products are: the folder of the running test binary.
    public static var productsDirectory: URL { NodeProcess.productsDirectory }
}

/// One node of a cluster: its name, its entries (as values or as the entries file's JSON), and any
/// flags of its own.
public struct NodeSpec: Sendable {
    /// What the entries file holds at the start.
    public enum Entries: Sendable {
        /// These entries (saved as the node would save them).
        case values([Entry])
        /// This text, written as is: a `{"version": 1, "entries": [...]}` document or a bare array.
        case json(String)
    }

    /// The node's name (1–64 characters of `A-Z a-z 0-9 . _ -`).
    public var name: String
    /// Its entries file's content at the start.
    public var entries: Entries
    /// Flags added after the kit's own (`--log-level debug`, `--call-timeout 2`…).
    public var arguments: [String]
    /// Environment variables added to the node's.
    public var environment: [String: String]

    /// A node named `name` running `entries`.
    public init(_ name: String, entries: [Entry] = [], arguments: [String] = [], environment: [String: String] = [:]) {
        self.init(name, entries: .values(entries), arguments: arguments, environment: environment)
    }

    /// A node named `name` whose entries file is `json` (the file's text, as written by hand).
    public init(_ name: String, json: String, arguments: [String] = [], environment: [String: String] = [:]) {
        self.init(name, entries: .json(json), arguments: arguments, environment: environment)
    }

    /// A node named `name` with the entries file `entries`.
    public init(_ name: String, entries: Entries, arguments: [String] = [], environment: [String: String] = [:]) {
        self.name = name
        self.entries = entries
        self.arguments = arguments
        self.environment = environment
    }
}

/// How a cluster's nodes are started and linked.
public struct ClusterOptions: Sendable {
    /// How nodes listen and link.
    public enum Transport: Sendable, Hashable {
        /// Unix sockets in the cluster's folder (the node's own user is admitted).
        case unix
        /// Loopback TCP on ports the kernel picks, with a generated cluster secret (always: a node
        /// refuses plain TCP without one).
        case tcp
        /// Loopback TCP with TLS 1.3: a CA, a certificate per node and an operator certificate for the
        /// kit's console, generated for the cluster by Cordis's `deploy/make-certs.sh` (needs `openssl`).
        case tls
    }

    /// How nodes find each other.
    public enum Discovery: Sendable, Hashable {
        /// The embedded mesh: each node is given the nodes before it as seeds (`--peer`).
        case mesh
        /// etcd mode: the kit starts a private etcd (Debian's `etcd-server`) on free loopback ports and
        /// gives every node `--discovery` to it.
        case etcd
    }

    /// The node program.
    public var executable: NodeExecutable
    /// The embedded mesh or etcd mode.
    public var discovery: Discovery
    /// Unix sockets, loopback TCP with a secret, or loopback TCP with TLS.
    public var transport: Transport
    /// Whether Unix-socket nodes also require the generated secret (TCP always does).
    public var secret: Bool
    /// Whether links between nodes go through the kit's relays, so `cut`, `heal` and `delay` work.
    /// Without it the nodes dial each other directly and those faults are refused.
    public var relays: Bool
    /// `--heartbeat-interval`, seconds.
    public var heartbeatInterval: Double
    /// `--heartbeat-timeout`, seconds: how long a cut link takes to be declared lost.
    public var heartbeatTimeout: Double
    /// How long a node may take to print `listening on`.
    public var startTimeout: Duration
    /// The deadline of an await that is not given one.
    public var defaultDeadline: Duration
    /// Flags given to every node (after the kit's own, before the node's own).
    public var arguments: [String]

    /// Options with the defaults: `cordis-node`, Unix sockets, the mesh, relays on, a heartbeat every 0.2 s and
    /// a peer down after 3 s of silence (a loaded machine stalls a live node for less), 60 s to start,
    /// 30 s per await.
    public init(
        executable: NodeExecutable = .cordisNode, transport: Transport = .unix, discovery: Discovery = .mesh,
        secret: Bool = false, relays: Bool = true,
        heartbeatInterval: Double = 0.2, heartbeatTimeout: Double = 3, startTimeout: Duration = .seconds(60),
        defaultDeadline: Duration = .seconds(30), arguments: [String] = []
    ) {
        self.executable = executable
        self.transport = transport
        self.discovery = discovery
        self.secret = secret
        self.relays = relays
        self.heartbeatInterval = heartbeatInterval
        self.heartbeatTimeout = heartbeatTimeout
        self.startTimeout = startTimeout
        self.defaultDeadline = defaultDeadline
        self.arguments = arguments
    }
}
