import Cordis
import CordisWire

/// The settings of one `cordis-node` process, from its command line and `--config` file, validated.
///
/// Make one with `NodeOptionsParser` (which applies every rule of the command line) or with `init`
/// in code and tests (which applies none). Lists keep the order in which they were given.
public struct NodeOptions: Sendable, Hashable {
    /// How often a node sends a heartbeat on each link by default: 0.5 s.
    public static let defaultHeartbeatInterval: Duration = .milliseconds(500)
    /// How long a peer may be silent before it is declared down, by default: 2 s.
    public static let defaultHeartbeatTimeout: Duration = .seconds(2)
    /// How long a remote call may take by default: 30 s.
    public static let defaultCallTimeout: Duration = .seconds(30)
    /// How long an orderly withdrawal waits for remote consumers by default: 5 s.
    public static let defaultWithdrawTimeout: Duration = .seconds(5)
    /// How long an orderly shutdown may take by default: 10 s.
    public static let defaultShutdownTimeout: Duration = .seconds(10)
    /// The largest frame by default: 4 MiB (4194304 bytes), as gRPC and ttrpc.
    public static let defaultMaxFrameSize = Frame.defaultMaxSize
    /// The smallest `--max-frame` accepted: 64 KiB, the handshake's own frame limit, so that any
    /// frame the handshake allows still fits afterwards.
    public static let minimumMaxFrameSize = Handshake.maxFrameSize
    /// The largest `--max-frame` accepted: 64 MiB, so that one link cannot make a node buffer more.
    public static let maximumMaxFrameSize = 64 * 1024 * 1024
    /// The longest duration any timeout or interval may be set to: one day (86400 s).
    public static let maximumDuration: Duration = .seconds(86_400)
    /// The log level by default: `info`.
    public static let defaultLogLevel = LogLevel.info
    /// How many `--secret-file`s may be given: the current secret and, during a rotation, a second.
    public static let maximumSecretFiles = 2
    /// The etcd lease of a node in etcd mode by default: 2 s.
    public static let defaultLeaseTTL: Duration = .seconds(2)
    /// How long a link may carry no call in etcd mode before it is closed, by default: 10 s.
    public static let defaultIdleLinkTimeout: Duration = .seconds(10)

    /// The node's name (`--name`): 1–64 characters of `A-Z a-z 0-9 . _ -`.
    public var name: String
    /// The path of the entries file (`--entries`), the node's plugin tree.
    public var entriesFile: String
    /// The addresses to listen on (`--listen`); empty under socket activation or for a dial-only node.
    public var listen: [Address]
    /// The addresses other nodes dial to reach this one (`--advertise`).
    public var advertise: [Address]
    /// The seed peers to dial (`--peer`).
    public var peers: [Address]
    /// The cluster secret files (`--secret-file`), at most two: the first proves, either is accepted.
    public var secretFiles: [String]
    /// Whether TCP listeners without a secret are allowed (`--insecure`).
    public var insecure: Bool
    /// This node's TLS certificate (`--tls-cert`); with the key and the CA file, every TCP link is TLS.
    public var tlsCertificateFile: String?
    /// The private key of the TLS certificate (`--tls-key`).
    public var tlsKeyFile: String?
    /// The CA certificates peers' certificates must chain to (`--tls-ca`; several during a rotation).
    public var tlsCAFile: String?
    /// The group of the Unix sockets (`--socket-group`); nil means the node's own group.
    public var socketGroup: SocketGroup?
    /// Further user ids accepted on Unix sockets (`--allow-uid`).
    public var allowedUIDs: [UInt32]
    /// How often a heartbeat is sent (`--heartbeat-interval`).
    public var heartbeatInterval: Duration
    /// How long a silent peer is waited for before it is declared down (`--heartbeat-timeout`).
    public var heartbeatTimeout: Duration
    /// How long a remote call may take (`--call-timeout`).
    public var callTimeout: Duration
    /// How long an orderly withdrawal waits for remote consumers (`--withdraw-timeout`).
    public var withdrawTimeout: Duration
    /// How long an orderly shutdown may take before the node exits 1 (`--shutdown-timeout`).
    public var shutdownTimeout: Duration
    /// The largest frame accepted or sent after the handshake, in bytes (`--max-frame`).
    public var maxFrameSize: Int
    /// The least severe level that is logged (`--log-level`).
    public var logLevel: LogLevel
    /// How log lines on standard error are written (`--log-format`); journald wins when stderr is
    /// connected to it.
    public var logFormat: LogFormat = .text
    /// Where `/metrics` is served (`--metrics-listen tcp:HOST:PORT`), nil for nowhere.
    public var metricsListen: Address?
    /// The config file the settings were read from (`--config`), if any.
    public var configFile: String?
    /// The operators file (`--operators`): identities and their roles, re-read on SIGHUP.
    public var operatorsFile: String?
    /// The PEM file of trusted Ed25519 public keys for signed plugin trees (`--trusted-keys`).
    public var trustedKeysFile: String?
    /// Whether only signed trees may change the node (`--require-signed-trees`).
    public var requireSignedTrees = false
    /// The etcd endpoints of `--discovery etcd:URL[,URL...]` (the setting as given), nil for the embedded mesh.
    public var discovery: String?
    /// How long the node's etcd lease lives without a keepalive (`--lease-ttl`), in whole seconds.
    public var leaseTTL: Duration = NodeOptions.defaultLeaseTTL
    /// How long a link may carry no call in etcd mode before it is closed (`--idle-link-timeout`).
    public var idleLinkTimeout: Duration = NodeOptions.defaultIdleLinkTimeout
    /// What one console identity may hold (`--console-links`, `--console-requests`, `--console-follows`).
    public var consoleBudget = ConsoleBudget()

    /// Options with the given values and the defaults for the rest; nothing is validated.
    public init(
        name: String,
        entriesFile: String,
        listen: [Address] = [],
        advertise: [Address] = [],
        peers: [Address] = [],
        secretFiles: [String] = [],
        insecure: Bool = false,
        socketGroup: SocketGroup? = nil,
        allowedUIDs: [UInt32] = [],
        heartbeatInterval: Duration = NodeOptions.defaultHeartbeatInterval,
        heartbeatTimeout: Duration = NodeOptions.defaultHeartbeatTimeout,
        callTimeout: Duration = NodeOptions.defaultCallTimeout,
        withdrawTimeout: Duration = NodeOptions.defaultWithdrawTimeout,
        shutdownTimeout: Duration = NodeOptions.defaultShutdownTimeout,
        maxFrameSize: Int = NodeOptions.defaultMaxFrameSize,
        logLevel: LogLevel = NodeOptions.defaultLogLevel,
        configFile: String? = nil
    ) {
        self.name = name
        self.entriesFile = entriesFile
        self.listen = listen
        self.advertise = advertise
        self.peers = peers
        self.secretFiles = secretFiles
        self.insecure = insecure
        self.socketGroup = socketGroup
        self.allowedUIDs = allowedUIDs
        self.heartbeatInterval = heartbeatInterval
        self.heartbeatTimeout = heartbeatTimeout
        self.callTimeout = callTimeout
        self.withdrawTimeout = withdrawTimeout
        self.shutdownTimeout = shutdownTimeout
        self.maxFrameSize = maxFrameSize
        self.logLevel = logLevel
        self.configFile = configFile
    }
}
