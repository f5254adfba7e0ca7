import Cordis
import CordisDiscovery
import CordisWire
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// What a node is and how it behaves on the network: its name, addresses, secrets and timings.
public struct NodeConfiguration: Sendable {
    /// The node's name, unique in the cluster.
    public var name: String
    /// This life's incarnation (a fresh value per process start).
    public var incarnation: String
    /// Addresses to listen on.
    public var listen: [Address]
    /// Addresses other nodes can dial (defaults to the real listening addresses).
    public var advertise: [Address]
    /// Seed addresses to dial.
    public var peers: [Address]
    /// The cluster secrets (nil: unauthenticated, for Unix sockets with peer-credential checks).
    public var secrets: ClusterSecrets?
    /// Who may connect over Unix sockets.
    public var peerPolicy: PeerPolicy
    /// The Unix socket group.
    public var socketGroup: UInt32?
    /// How often heartbeats are sent.
    public var heartbeatInterval: Duration
    /// How long a silent peer is waited for before it is declared down.
    public var heartbeatTimeout: Duration
    /// How long a remote call may take.
    public var callTimeout: Duration
    /// How long a withdrawal waits for remote consumers' acknowledgements.
    public var withdrawTimeout: Duration
    /// The largest frame accepted.
    public var maxFrameSize: Int
    /// The TLS context (`--tls-cert`, `--tls-key`, `--tls-ca`): every TCP link, dialled or accepted,
    /// runs TLS 1.3 with both certificates verified; nil: no TLS.
    public var tls: TLSContext?
    /// Whether TCP listeners may run without a secret (`--insecure`).
    public var allowsInsecureTCP = false
    /// First and largest delay before re-dialling a lost peer.
    public var reconnectBackoff: (first: Duration, maximum: Duration)
    /// How many connections all listeners together may hold (shared out between them); `NodeRunner` sets
    /// it from the descriptor limit (`DescriptorBudget`).
    public var connectionBudget = 1024
    /// Operators and roles, trusted signing keys, and whether only signed trees may change the node.
    public var security = NodeSecurity()
    /// The etcd endpoints of etcd mode (`--discovery`); empty for the embedded mesh.
    package var etcdEndpoints: [EtcdEndpoint] = []
    /// The etcd lease's time to live in etcd mode (`--lease-ttl`).
    public var leaseTTL: Duration = .seconds(2)
    /// How long a link may carry no call before it is closed, in etcd mode.
    public var idleLinkTimeout: Duration = .seconds(10)
    /// What one console identity may hold: links, requests running, follow subscriptions.
    public var consoleBudget = ConsoleBudget()

    /// A configuration with the defaults of `cordis-node`'s flags.
    public init(
        name: String, incarnation: String = UUID().uuidString.lowercased(), listen: [Address] = [],
        advertise: [Address] = [], peers: [Address] = [], secrets: ClusterSecrets? = nil,
        peerPolicy: PeerPolicy = PeerPolicy(), socketGroup: UInt32? = nil,
        heartbeatInterval: Duration = .milliseconds(500), heartbeatTimeout: Duration = .seconds(2),
        callTimeout: Duration = .seconds(30), withdrawTimeout: Duration = .seconds(5),
        maxFrameSize: Int = Frame.defaultMaxSize
    ) {
        self.name = name
        self.incarnation = incarnation
        self.listen = listen
        self.advertise = advertise
        self.peers = peers
        self.secrets = secrets
        self.peerPolicy = peerPolicy
        self.socketGroup = socketGroup
        self.heartbeatInterval = heartbeatInterval
        self.heartbeatTimeout = heartbeatTimeout
        self.callTimeout = callTimeout
        self.withdrawTimeout = withdrawTimeout
        self.maxFrameSize = maxFrameSize
        self.reconnectBackoff = (.milliseconds(50), .seconds(2))
    }
}
