/// One flag of `cordis-node`: its long name, how it takes values, its help line.
///
/// The one table behind the parser, the config keys (the long name without dashes) and the usage text.
enum NodeFlag: String, CaseIterable, Sendable {
    case name
    case entries
    case listen
    case advertise
    case peer
    case secretFile = "secret-file"
    case insecure
    case tlsCert = "tls-cert"
    case tlsKey = "tls-key"
    case tlsCA = "tls-ca"
    case socketGroup = "socket-group"
    case allowUID = "allow-uid"
    case heartbeatInterval = "heartbeat-interval"
    case heartbeatTimeout = "heartbeat-timeout"
    case callTimeout = "call-timeout"
    case withdrawTimeout = "withdraw-timeout"
    case shutdownTimeout = "shutdown-timeout"
    case maxFrame = "max-frame"
    case logLevel = "log-level"
    case logFormat = "log-format"
    case metricsListen = "metrics-listen"
    case config
    case operators
    case trustedKeys = "trusted-keys"
    case requireSignedTrees = "require-signed-trees"
    case discovery
    case leaseTTL = "lease-ttl"
    case idleLinkTimeout = "idle-link-timeout"
    case consoleLinks = "console-links"
    case consoleRequests = "console-requests"
    case consoleFollows = "console-follows"
    case version
    case help

    /// How a flag takes values.
    enum Arity {
        /// One value, given at most once.
        case single
        /// One value per occurrence, collected in order.
        case repeated
        /// No value (`--insecure`); `--insecure=true|false` is accepted too.
        case toggle
        /// No value; answers instead of running (`--help`, `--version`).
        case action
    }

    /// The flag as written on the command line: `--secret-file`.
    var spelling: String { "--\(rawValue)" }

    /// The key of the setting in a `--config` file, or nil for flags that cannot be set there.
    var configKey: String? {
        switch self {
        case .config, .version, .help: return nil
        default: return rawValue
        }
    }

    /// How the flag takes values.
    var arity: Arity {
        switch self {
        case .listen, .advertise, .peer, .secretFile, .allowUID: return .repeated
        case .insecure: return .toggle
        case .requireSignedTrees: return .toggle
        case .version, .help: return .action
        default: return .single
        }
    }

    /// The placeholder for the value in the usage text.
    var valueName: String? {
        switch self {
        case .name: return "NAME"
        case .entries, .secretFile, .config: return "FILE"
        case .operators, .trustedKeys: return "FILE"
        case .tlsCert, .tlsKey, .tlsCA: return "FILE"
        case .listen, .advertise, .peer: return "ADDR"
        case .socketGroup: return "GROUP"
        case .allowUID: return "UID"
        case .heartbeatInterval, .heartbeatTimeout, .callTimeout, .withdrawTimeout, .shutdownTimeout, .idleLinkTimeout:
            return "S"
        case .maxFrame: return "BYTES"
        case .consoleLinks, .consoleRequests, .consoleFollows: return "N"
        case .logLevel: return "LEVEL"
        case .logFormat: return "text|json"
        case .metricsListen: return "tcp:HOST:PORT"
        case .discovery: return "etcd:URL[,URL...]"
        case .leaseTTL: return "S"
        case .insecure, .version, .help: return nil
        case .requireSignedTrees: return nil
        }
    }

    /// The flag with its value placeholder, as in the usage text: `--listen ADDR`.
    var synopsis: String {
        guard let valueName else { return spelling }
        return "\(spelling) \(valueName)"
    }

    /// What the flag does, for the usage text.
    var summary: String {
        switch self {
        case .name: return "this node's name: 1-64 characters of A-Z a-z 0-9 . _ - (required)"
        case .entries: return "the entries file, this node's plugin tree; missing means empty (required)"
        case .listen: return "listen on ADDR: unix:/path, tcp:HOST:PORT or tcp:[IPv6]:PORT (port 0 picks one); repeatable"
        case .advertise: return "an address other nodes dial to reach this one (needed with a wildcard --listen); repeatable"
        case .peer: return "a peer to dial; repeatable"
        case .secretFile: return "the cluster secret (at least 32 bytes, no permission for group or others); twice during a rotation: the first proves, either is accepted"
        case .insecure: return "allow listening on TCP without TLS or --secret-file (logged as a warning)"
        case .tlsCert: return "this node's certificate (PEM), naming it with the SAN URI:cordis://node/NAME; with --tls-key and --tls-ca every TCP link is TLS 1.3"
        case .tlsKey: return "the private key of --tls-cert (PEM)"
        case .tlsCA: return "the CA certificates (PEM, one or more: all are trusted, for a rotation) every peer's certificate must chain to"
        case .socketGroup: return "the group name or number owning the Unix sockets (mode 0660)"
        case .allowUID: return "a further user id accepted on Unix sockets; repeatable"
        case .heartbeatInterval: return "seconds between heartbeats"
        case .heartbeatTimeout: return "seconds of silence before a peer is declared down"
        case .callTimeout: return "seconds a remote call may take"
        case .withdrawTimeout: return "seconds an orderly withdrawal waits for remote consumers"
        case .shutdownTimeout: return "seconds an orderly shutdown may take before exiting 1"
        case .maxFrame: return "the largest frame in bytes, from 65536 (64 KiB) to 67108864 (64 MiB)"
        case .logLevel: return "the least severe level logged: error, warn, info or debug"
        case .logFormat: return "stderr lines as text or as one JSON object each (journald is used whenever stderr is connected to it)"
        case .metricsListen: return "serve GET /metrics (Prometheus text format) on this TCP address, without authentication (port 0 picks one)"
        case .discovery: return "membership and services through etcd's v3 API instead of the embedded mesh; links open only where calls flow"
        case .leaseTTL: return "seconds the node's etcd lease lives without a keepalive (whole seconds, 1 to 3600; kept alive at a third of it)"
        case .idleLinkTimeout: return "with --discovery, seconds a link may carry no call before it is closed (the next call opens a new one)"
        case .consoleLinks: return "links one console identity (user, certificate name, cluster) may hold at once, 1 to 65536"
        case .consoleRequests: return "requests one console identity may have running at once over all its links, 1 to 65536"
        case .consoleFollows: return "event subscriptions one console identity may hold over all its links, 1 to 65536"
        case .config: return "read settings from a JSON object keyed by these flag names without dashes; flags override it"
        case .operators: return "a JSON object from operator identity (NAME, uid:N, user:NAME, group:NAME, cluster) to role (viewer, operator, admin); unlisted consoles are refused; re-read on SIGHUP"
        case .trustedKeys: return "a PEM file of the Ed25519 public keys whose signed plugin trees this node applies"
        case .requireSignedTrees: return "refuse every unsigned change from consoles and SIGHUP; only signed trees change the node"
        case .version: return "print the version and exit"
        case .help: return "print this help and exit"
        }
    }

    /// The default, as shown in the usage text, or nil for flags without one.
    var defaultText: String? {
        switch self {
        case .listen, .advertise, .peer, .secretFile, .allowUID: return "none"
        case .insecure: return "off"
        case .socketGroup: return "the node's own group"
        case .heartbeatInterval: return SettingSyntax.secondsText(NodeOptions.defaultHeartbeatInterval)
        case .heartbeatTimeout: return SettingSyntax.secondsText(NodeOptions.defaultHeartbeatTimeout)
        case .callTimeout: return SettingSyntax.secondsText(NodeOptions.defaultCallTimeout)
        case .withdrawTimeout: return SettingSyntax.secondsText(NodeOptions.defaultWithdrawTimeout)
        case .shutdownTimeout: return SettingSyntax.secondsText(NodeOptions.defaultShutdownTimeout)
        case .maxFrame: return "\(NodeOptions.defaultMaxFrameSize) (4 MiB)"
        case .logLevel: return NodeOptions.defaultLogLevel.description
        case .logFormat: return "text"
        case .metricsListen: return "none"
        case .discovery: return "the embedded mesh"
        case .leaseTTL: return SettingSyntax.secondsText(NodeOptions.defaultLeaseTTL)
        case .idleLinkTimeout: return SettingSyntax.secondsText(NodeOptions.defaultIdleLinkTimeout)
        case .consoleLinks: return "64, or a quarter of the node's connection budget when smaller"
        case .consoleRequests: return String(ConsoleBudget().requests)
        case .consoleFollows: return String(ConsoleBudget().follows)
        case .name, .entries, .config, .version, .help: return nil
        case .operators: return "none: every accepted console is admin"
        case .trustedKeys: return "none: signed trees are refused"
        case .tlsCert, .tlsKey, .tlsCA: return "none: no TLS"
        case .requireSignedTrees: return "off"
        }
    }

    /// The flag named `name` (without dashes), or nil.
    init?(longName name: String) {
        self.init(rawValue: name)
    }

    /// The known name closest to `name` (both without dashes), for a "did you mean" hint; nil when none
    /// is close. A unique prefix wins (`secret` → `secret-file`); otherwise the nearest name within a
    /// small edit distance (`lisen` → `listen`).
    static func suggestion(for name: String, among candidates: [String]) -> String? {
        let lowered = name.lowercased()
        guard !lowered.isEmpty else { return nil }
        let prefixed = candidates.filter { $0.hasPrefix(lowered) }
        if prefixed.count == 1 { return prefixed[0] }
        var best: (name: String, distance: Int)?
        for candidate in candidates {
            let distance = editDistance(lowered, candidate)
            if distance < (best?.distance ?? Int.max) { best = (candidate, distance) }
        }
        guard let best else { return nil }
        let allowed = max(1, min(3, best.name.count / 3))
        if best.distance <= allowed { return best.name }
        // `--max-frame-size` for `--max-frame`: a known name followed by a dash and more.
        if let extended = candidates.first(where: { lowered.hasPrefix($0 + "-") || lowered == $0 + "s" }) {
            return extended
        }
        return nil
    }

    /// The Levenshtein distance between two short strings, in characters.
    static func editDistance(_ a: String, _ b: String) -> Int {
        let a = Array(a.prefix(128))
        let b = Array(b.prefix(128))
        guard !a.isEmpty else { return b.count }
        guard !b.isEmpty else { return a.count }
        var previous = Array(0...b.count)
        var current = Array(repeating: 0, count: b.count + 1)
        for i in 1...a.count {
            current[0] = i
            for j in 1...b.count {
                let substitution = previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)
                current[j] = min(previous[j] + 1, current[j - 1] + 1, substitution)
            }
            swap(&previous, &current)
        }
        return previous[b.count]
    }
}
