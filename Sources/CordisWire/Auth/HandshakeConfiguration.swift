/// What one side brings to a handshake: who it is, its secrets, and whom it admits.
public struct HandshakeConfiguration: Sendable {
    /// This side's identity, sent in `hello`, `challenge` or `welcome`.
    public var identity: PeerIdentity
    /// The cluster secrets; nil runs the unauthenticated handshake (Unix socket with a peer-credential
    /// check, or `--insecure`). With secrets, a peer that does not authenticate is refused.
    public var secrets: ClusterSecrets?
    /// Decides, once the peer is authenticated, whether to admit it; returns a rejection to refuse it
    /// (for example when a live member holds its name under another incarnation). Called synchronously
    /// on the event loop's thread during the handshake.
    public var admit: (@Sendable (PeerIdentity) -> Rejection?)?
    /// The roles accepted from the peer (both by default).
    public var acceptedRoles: Set<PeerRole>
    /// The TLS context: every TCP link this side dials runs TLS (the listener's options carry it for
    /// accepted links) and its handshake uses the `tls` scheme; nil: no TLS.
    public var tls: TLSContext?

    /// A configuration.
    public init(
        identity: PeerIdentity, secrets: ClusterSecrets?, acceptedRoles: Set<PeerRole> = [.node, .console],
        admit: (@Sendable (PeerIdentity) -> Rejection?)? = nil, tls: TLSContext? = nil
    ) {
        self.tls = tls
        self.identity = identity
        self.secrets = secrets
        self.acceptedRoles = acceptedRoles
        self.admit = admit
    }
}
