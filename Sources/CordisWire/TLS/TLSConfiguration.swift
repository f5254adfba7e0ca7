/// What a TLS side needs: its certificate chain and key, and the CA file its peers' certificates must
/// verify against (several CAs may be in it during a rotation), all PEM.
public struct TLSConfiguration: Sendable, Hashable {
    /// This side's certificate (PEM; intermediates may follow it).
    public var certificateFile: String
    /// This side's private key (PEM).
    public var keyFile: String
    /// The CA certificates peers must chain to (PEM, one or more).
    public var caFile: String
    /// The time certificates are checked at, in seconds since 1970; nil: now. (A test seam: a later
    /// time makes a valid certificate expired.)
    public var verificationTime: Int64?

    /// A configuration.
    public init(certificateFile: String, keyFile: String, caFile: String, verificationTime: Int64? = nil) {
        self.certificateFile = certificateFile
        self.keyFile = keyFile
        self.caFile = caFile
        self.verificationTime = verificationTime
    }
}
