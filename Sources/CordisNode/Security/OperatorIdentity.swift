import CordisWire

#if canImport(Glibc)
import Glibc
#endif

/// Who a console is, as the node that accepted its link sees it: a name for logs and events and every
/// identity an operators file may list it under.
///
/// - On a Unix socket: the peer's user (`uid:N`, and `user:NAME` when the name is known) and its
///   groups (`gid:N`, and `group:NAME`: primary and supplementary), from the kernel's peer
///   credentials, only (names as the operators file resolved them when it was read):
///   proving the cluster secret there too does not add `cluster` (the user is known, and an
///   operators file must not lift it to the secret's role).
/// - On TCP with the cluster secret: `cluster`.
/// - On TCP under `--insecure`: no identity at all (an operators file cannot admit it).
/// - On TCP with TLS: the operator name of its certificate (`alice` for `URI:cordis://operator/alice`),
///   which its handshake name must be; the secret, if the node has one, is not used there. A certificate
///   named like an identity the operators file reserves (`cluster`, the holders of the secret) is no
///   identity: it cannot take the role the file gives to that name.
public struct OperatorIdentity: Sendable, Hashable, CustomStringConvertible {
    /// The name shown in logs and events: the user's name (else `uid:N`), the certificate's name, or
    /// `cluster`; `anonymous` for an unauthenticated TCP console.
    public var name: String
    /// The identities an operators file is matched against.
    public var identities: [String]

    /// The identity of a relayed request's operator.
    public init(name: String, identities: [String]) {
        self.name = name
        self.identities = identities
    }

    /// The identity of a console link from its Unix peer credentials (nil on TCP), whether it proved
    /// the cluster secret, and its certificate's operator name (nil without TLS). A Unix peer is
    /// `uid:N` and `gid:N` for its groups, plus the `user:` and `group:` names `accounts` (the
    /// operators file's, resolved when it was read) gives those ids: nothing is looked up here.
    public init(
        credentials: PeerCredentials?, provedSecret: Bool, certificateName: String? = nil,
        accounts: AccountNames = AccountNames()
    ) {
        var identities: [String] = []
        var name: String?
        if let certificateName {
            if !OperatorsFile.reservedNames.contains(certificateName) { identities.append(certificateName) }
            name = certificateName
        }
        if let credentials {
            identities.append("uid:\(credentials.uid)")
            let users = accounts.userNames(of: credentials.uid)
            identities += users.map { "user:\($0)" }
            name = name ?? users.first ?? "uid:\(credentials.uid)"
            var seen: Set<UInt32> = []
            for gid in [credentials.gid] + credentials.groups where seen.insert(gid).inserted {
                identities.append("gid:\(gid)")
                identities += accounts.groupNames(of: gid).map { "group:\($0)" }
            }
        }
        if provedSecret, credentials == nil {
            identities.append("cluster")
            name = name ?? "cluster"
        }
        self.name = name ?? "anonymous"
        self.identities = identities
    }

    /// The identity carried in a relayed request.
    public init(_ relayed: RequestOperator) {
        self.init(name: relayed.name, identities: relayed.identities)
    }

    /// The form a relayed request carries.
    public var relayed: RequestOperator { RequestOperator(name: name, identities: identities) }

    /// `name`.
    public var description: String { name }
}
