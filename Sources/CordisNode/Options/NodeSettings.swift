import Cordis
import CordisWire

/// The settings one source gave (the command line or a config file), each nil when that source left
/// it out; `overriding(_:)` merges two sources and `resolve()` turns the result into `NodeOptions`.
struct NodeSettings: Sendable {
    var name: String?
    var entries: String?
    var listen: [Address]?
    var advertise: [Address]?
    var peers: [Address]?
    var secretFiles: [String]?
    var insecure: Bool?
    var tlsCert: String?
    var tlsKey: String?
    var tlsCA: String?
    var socketGroup: SocketGroup?
    var allowedUIDs: [UInt32]?
    var heartbeatInterval: Duration?
    var heartbeatTimeout: Duration?
    var callTimeout: Duration?
    var withdrawTimeout: Duration?
    var shutdownTimeout: Duration?
    var maxFrameSize: Int?
    var logLevel: LogLevel?
    var logFormat: LogFormat?
    var metricsListen: Address?
    var config: String?
    var operators: String?
    var trustedKeys: String?
    var requireSignedTrees: Bool?
    var discovery: String?
    var leaseTTL: Duration?
    var idleLinkTimeout: Duration?
    var consoleLinks: Int?
    var consoleRequests: Int?
    var consoleFollows: Int?

    /// Whether this source set `flag` at all.
    func has(_ flag: NodeFlag) -> Bool {
        switch flag {
        case .name: return name != nil
        case .entries: return entries != nil
        case .listen: return listen != nil
        case .advertise: return advertise != nil
        case .peer: return peers != nil
        case .secretFile: return secretFiles != nil
        case .insecure: return insecure != nil
        case .tlsCert: return tlsCert != nil
        case .tlsKey: return tlsKey != nil
        case .tlsCA: return tlsCA != nil
        case .socketGroup: return socketGroup != nil
        case .allowUID: return allowedUIDs != nil
        case .heartbeatInterval: return heartbeatInterval != nil
        case .heartbeatTimeout: return heartbeatTimeout != nil
        case .callTimeout: return callTimeout != nil
        case .withdrawTimeout: return withdrawTimeout != nil
        case .shutdownTimeout: return shutdownTimeout != nil
        case .maxFrame: return maxFrameSize != nil
        case .logLevel: return logLevel != nil
        case .logFormat: return logFormat != nil
        case .metricsListen: return metricsListen != nil
        case .config: return config != nil
        case .operators: return operators != nil
        case .trustedKeys: return trustedKeys != nil
        case .requireSignedTrees: return requireSignedTrees != nil
        case .discovery: return discovery != nil
        case .leaseTTL: return leaseTTL != nil
        case .idleLinkTimeout: return idleLinkTimeout != nil
        case .consoleLinks: return consoleLinks != nil
        case .consoleRequests: return consoleRequests != nil
        case .consoleFollows: return consoleFollows != nil
        case .version, .help: return false
        }
    }

    /// Sets one value of `flag` from its text; a list flag appends. Throws `SettingProblem`.
    mutating func apply(_ flag: NodeFlag, text: String) throws(SettingProblem) {
        switch flag {
        case .name: name = try SettingSyntax.name(text)
        case .entries: entries = try SettingSyntax.path(text)
        case .listen: listen = (listen ?? []) + [try SettingSyntax.address(text)]
        case .advertise: advertise = (advertise ?? []) + [try SettingSyntax.address(text)]
        case .peer: peers = (peers ?? []) + [try SettingSyntax.address(text)]
        case .secretFile: secretFiles = (secretFiles ?? []) + [try SettingSyntax.path(text)]
        case .insecure: insecure = try SettingSyntax.toggle(text)
        case .tlsCert: tlsCert = try SettingSyntax.path(text)
        case .tlsKey: tlsKey = try SettingSyntax.path(text)
        case .tlsCA: tlsCA = try SettingSyntax.path(text)
        case .socketGroup: socketGroup = try SettingSyntax.group(text)
        case .allowUID: allowedUIDs = (allowedUIDs ?? []) + [try SettingSyntax.uid(text)]
        case .heartbeatInterval: heartbeatInterval = try SettingSyntax.duration(text)
        case .heartbeatTimeout: heartbeatTimeout = try SettingSyntax.duration(text)
        case .callTimeout: callTimeout = try SettingSyntax.duration(text)
        case .withdrawTimeout: withdrawTimeout = try SettingSyntax.duration(text)
        case .shutdownTimeout: shutdownTimeout = try SettingSyntax.duration(text)
        case .maxFrame: maxFrameSize = try SettingSyntax.frameSize(text)
        case .logLevel: logLevel = try SettingSyntax.logLevel(text)
        case .logFormat: logFormat = try SettingSyntax.logFormat(text)
        case .metricsListen: metricsListen = try SettingSyntax.metricsAddress(text)
        case .config: config = try SettingSyntax.path(text)
        case .operators: operators = try SettingSyntax.path(text)
        case .trustedKeys: trustedKeys = try SettingSyntax.path(text)
        case .requireSignedTrees: requireSignedTrees = try SettingSyntax.toggle(text)
        case .discovery: discovery = try SettingSyntax.discovery(text)
        case .leaseTTL: leaseTTL = try SettingSyntax.leaseTTL(text)
        case .idleLinkTimeout: idleLinkTimeout = try SettingSyntax.duration(text)
        case .consoleLinks: consoleLinks = try SettingSyntax.budget(text)
        case .consoleRequests: consoleRequests = try SettingSyntax.budget(text)
        case .consoleFollows: consoleFollows = try SettingSyntax.budget(text)
        case .version, .help: break
        }
    }

    /// These settings where set, `base`'s elsewhere: a list set here replaces `base`'s whole list.
    func overriding(_ base: NodeSettings) -> NodeSettings {
        NodeSettings(
            name: name ?? base.name,
            entries: entries ?? base.entries,
            listen: listen ?? base.listen,
            advertise: advertise ?? base.advertise,
            peers: peers ?? base.peers,
            secretFiles: secretFiles ?? base.secretFiles,
            insecure: insecure ?? base.insecure,
            tlsCert: tlsCert ?? base.tlsCert,
            tlsKey: tlsKey ?? base.tlsKey,
            tlsCA: tlsCA ?? base.tlsCA,
            socketGroup: socketGroup ?? base.socketGroup,
            allowedUIDs: allowedUIDs ?? base.allowedUIDs,
            heartbeatInterval: heartbeatInterval ?? base.heartbeatInterval,
            heartbeatTimeout: heartbeatTimeout ?? base.heartbeatTimeout,
            callTimeout: callTimeout ?? base.callTimeout,
            withdrawTimeout: withdrawTimeout ?? base.withdrawTimeout,
            shutdownTimeout: shutdownTimeout ?? base.shutdownTimeout,
            maxFrameSize: maxFrameSize ?? base.maxFrameSize,
            logLevel: logLevel ?? base.logLevel,
            logFormat: logFormat ?? base.logFormat,
            metricsListen: metricsListen ?? base.metricsListen,
            config: config ?? base.config,
            operators: operators ?? base.operators,
            trustedKeys: trustedKeys ?? base.trustedKeys,
            requireSignedTrees: requireSignedTrees ?? base.requireSignedTrees,
            discovery: discovery ?? base.discovery,
            leaseTTL: leaseTTL ?? base.leaseTTL,
            idleLinkTimeout: idleLinkTimeout ?? base.idleLinkTimeout,
            consoleLinks: consoleLinks ?? base.consoleLinks,
            consoleRequests: consoleRequests ?? base.consoleRequests,
            consoleFollows: consoleFollows ?? base.consoleFollows)
    }

    /// The options these settings make, with defaults for what is unset, once every rule holds.
    ///
    /// - Throws: `NodeOptionsError` with `missingSetting`, `repeatedFlag` or `conflict`.
    func resolve() throws(NodeOptionsError) -> NodeOptions {
        guard let name else {
            throw NodeOptionsError(
                .missingSetting, "--name is required: the node's name, 1–64 characters of A-Z a-z 0-9 . _ -")
        }
        guard let entries else {
            throw NodeOptionsError(
                .missingSetting, "--entries is required: the path of the node's entries file (a missing file is an empty tree)")
        }
        var options = NodeOptions(name: name, entriesFile: entries, configFile: config)
        options.listen = listen ?? []
        options.advertise = advertise ?? []
        options.peers = peers ?? []
        options.secretFiles = secretFiles ?? []
        options.insecure = insecure ?? false
        options.tlsCertificateFile = tlsCert
        options.tlsKeyFile = tlsKey
        options.tlsCAFile = tlsCA
        options.socketGroup = socketGroup
        options.allowedUIDs = allowedUIDs ?? []
        options.heartbeatInterval = heartbeatInterval ?? NodeOptions.defaultHeartbeatInterval
        options.heartbeatTimeout = heartbeatTimeout ?? NodeOptions.defaultHeartbeatTimeout
        options.callTimeout = callTimeout ?? NodeOptions.defaultCallTimeout
        options.withdrawTimeout = withdrawTimeout ?? NodeOptions.defaultWithdrawTimeout
        options.shutdownTimeout = shutdownTimeout ?? NodeOptions.defaultShutdownTimeout
        options.maxFrameSize = maxFrameSize ?? NodeOptions.defaultMaxFrameSize
        options.logLevel = logLevel ?? NodeOptions.defaultLogLevel
        options.logFormat = logFormat ?? .text
        options.metricsListen = metricsListen
        options.operatorsFile = operators
        options.trustedKeysFile = trustedKeys
        options.requireSignedTrees = requireSignedTrees ?? false
        options.discovery = discovery
        options.leaseTTL = leaseTTL ?? NodeOptions.defaultLeaseTTL
        options.idleLinkTimeout = idleLinkTimeout ?? NodeOptions.defaultIdleLinkTimeout
        options.consoleBudget = ConsoleBudget(
            links: consoleLinks, requests: consoleRequests ?? ConsoleBudget().requests, follows: consoleFollows ?? ConsoleBudget().follows)
        try Self.check(options)
        return options
    }

    /// The rules between settings.
    private static func check(_ options: NodeOptions) throws(NodeOptionsError) {
        if options.secretFiles.count > NodeOptions.maximumSecretFiles {
            throw NodeOptionsError(
                .repeatedFlag,
                "--secret-file is given \(options.secretFiles.count) times; at most 2 (two secrets during a rotation)")
        }
        if options.heartbeatTimeout <= options.heartbeatInterval {
            throw NodeOptionsError(
                .conflict,
                "--heartbeat-timeout (\(SettingSyntax.secondsText(options.heartbeatTimeout)) s) must be longer than "
                    + "--heartbeat-interval (\(SettingSyntax.secondsText(options.heartbeatInterval)) s)")
        }
        var seen: Set<Address> = []
        for address in options.listen {
            guard seen.insert(address).inserted else {
                throw NodeOptionsError(.conflict, "--listen \(address) is given twice")
            }
        }
        let tls = [("--tls-cert", options.tlsCertificateFile), ("--tls-key", options.tlsKeyFile), ("--tls-ca", options.tlsCAFile)]
        let missing = tls.filter { $0.1 == nil }.map(\.0)
        if !missing.isEmpty, missing.count < tls.count {
            throw NodeOptionsError(
                .conflict,
                "TLS needs all three of --tls-cert, --tls-key and --tls-ca; \(missing.joined(separator: " and ")) "
                    + (missing.count == 1 ? "is" : "are") + " missing")
        }
        if let refusal = ListenerSecurity.refusal(
            listeningOn: options.listen, secured: !options.secretFiles.isEmpty || missing.isEmpty,
            insecureAllowed: options.insecure)
        {
            throw NodeOptionsError(.conflict, refusal)
        }
        if options.advertise.isEmpty, let wildcard = options.listen.first(where: \.isWildcard) {
            throw NodeOptionsError(
                .conflict,
                "listening on the wildcard address \(wildcard) needs --advertise ADDR: an address other nodes can dial")
        }
        for address in options.advertise {
            if address.isWildcard {
                throw NodeOptionsError(
                    .conflict, "--advertise \(address) is a wildcard address; advertise one that other nodes can dial")
            }
            if address.tcpPort == 0 {
                throw NodeOptionsError(
                    .conflict, "--advertise \(address) has port 0; advertise the port other nodes dial")
            }
        }
        if options.requireSignedTrees, options.trustedKeysFile == nil {
            throw NodeOptionsError(
                .conflict, "--require-signed-trees needs --trusted-keys FILE: the keys whose signed trees the node applies")
        }
        if options.discovery != nil, let peer = options.peers.first {
            throw NodeOptionsError(
                .conflict, "--peer \(peer) is not used with --discovery: members are found through etcd")
        }
        for address in options.peers where address.tcpPort == 0 {
            throw NodeOptionsError(.conflict, "--peer \(address) has port 0; give the port the peer listens on")
        }
    }
}
