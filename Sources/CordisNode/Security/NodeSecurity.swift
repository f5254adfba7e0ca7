import CordisSigning

/// A node's security settings beyond link authentication: who may do what (`--operators`), which keys
/// may sign plugin trees (`--trusted-keys`), and whether only signed trees may change the node
/// (`--require-signed-trees`).
public struct NodeSecurity: Sendable {
    /// The operators file (`--operators FILE`), re-read on SIGHUP; nil: every accepted console is admin.
    public var operatorsFile: String?
    /// The table read from `operatorsFile` at start (`NodeRunner` reads it before anything starts).
    public var operators: OperatorsFile?
    /// The PEM file of Ed25519 public keys that may sign plugin trees (`--trusted-keys FILE`).
    public var trustedKeysFile: String?
    /// Whether every unsigned change from a console or a SIGHUP reload is refused (`--require-signed-trees`).
    public var requireSignedTrees = false
    /// The keys read from `trustedKeysFile` at start (re-read on SIGHUP).
    public var trustedKeys: TrustedKeys?
    /// Where the version of the last signed tree applied is kept (beside the entries file); nil: signed
    /// trees are refused.
    public var appliedVersion: AppliedVersion?

    /// Settings with nothing configured: every accepted console is admin, signed trees are refused
    /// (no key is trusted), unsigned changes are accepted.
    public init(
        operatorsFile: String? = nil, operators: OperatorsFile? = nil, trustedKeysFile: String? = nil,
        requireSignedTrees: Bool = false
    ) {
        self.operatorsFile = operatorsFile
        self.operators = operators
        self.trustedKeysFile = trustedKeysFile
        self.requireSignedTrees = requireSignedTrees
    }
}

extension NodeSecurity {
    /// The settings `options` give, with the operators file read.
    ///
    /// - Throws: `OperatorsFileError` when the operators file cannot be read or parsed, `SigningError`
    ///   when the trusted keys cannot.
    public init(_ options: NodeOptions) throws {
        self.init(
            operatorsFile: options.operatorsFile,
            operators: try options.operatorsFile.map { path throws(OperatorsFileError) in try OperatorsFile.load(path: path) },
            trustedKeysFile: options.trustedKeysFile, requireSignedTrees: options.requireSignedTrees)
        trustedKeys = try options.trustedKeysFile.map { path throws(SigningError) in try TrustedKeys.load(path: path) }
        appliedVersion = AppliedVersion(besideEntries: options.entriesFile)
    }
}
