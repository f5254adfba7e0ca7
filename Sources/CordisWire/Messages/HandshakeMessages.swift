/// The first message of a link, from the side that dialled: its identity, a fresh nonce and the
/// authentication it offers.
public struct Hello: Sendable, Hashable {
    /// Who the dialling side is.
    public var identity: PeerIdentity
    /// 32 random bytes, fresh for this link (hex on the wire).
    public var nonce: [UInt8]
    /// The authentication the dialling side will perform.
    public var auth: AuthenticationScheme

    /// A hello message.
    public init(identity: PeerIdentity, nonce: [UInt8], auth: AuthenticationScheme) {
        self.identity = identity
        self.nonce = nonce
        self.auth = auth
    }
}

/// How a link is authenticated; written in `hello` as `"auth"`.
public struct AuthenticationScheme: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    /// The scheme's name on the wire.
    public let rawValue: String

    /// A scheme from its wire name.
    public init(rawValue: String) { self.rawValue = rawValue }

    /// Mutual HMAC-SHA256 challenge-response with the cluster secret, then a MAC on every frame.
    public static let hmacSHA256 = AuthenticationScheme(rawValue: "hmac-sha256")
    /// Mutual TLS 1.3 certificates: the link runs inside TLS, the handshake's name must be the one
    /// the certificate holds, and frames carry no MAC of their own.
    public static let tls = AuthenticationScheme(rawValue: "tls")
    /// No authentication (a Unix socket checked by peer credentials, or `--insecure`).
    public static let none = AuthenticationScheme(rawValue: "none")

    public var description: String { rawValue }
}

/// The accepting side's answer to an authenticated `hello`: only its own fresh nonce. It says nothing
/// about the accepting side, which reveals its identity in the `welcome`, once the dialling side's
/// proof has verified.
public struct Challenge: Sendable, Hashable {
    /// 32 random bytes, fresh for this link (hex on the wire).
    public var nonce: [UInt8]

    /// A challenge message.
    public init(nonce: [UInt8]) {
        self.nonce = nonce
    }
}

/// The handshake's final message from the accepting side: its identity, and its proof when the link
/// is authenticated.
public struct Welcome: Sendable, Hashable {
    /// The accepting side's identity (always present from protocol 1.2 on).
    public var identity: PeerIdentity?
    /// The accepting side's 32-byte proof; present exactly when the link is authenticated.
    public var proof: [UInt8]?

    /// A welcome message.
    public init(identity: PeerIdentity? = nil, proof: [UInt8]? = nil) {
        self.identity = identity
        self.proof = proof
    }
}

/// A refusal of the handshake, with the reason; the sender closes the link after it.
public struct Rejection: Sendable, Hashable {
    /// The `WireError` code that explains the refusal (`versionMismatch`, `badMAC`, `notAdmitted`…).
    public var code: String
    /// A sentence for the operator.
    public var reason: String

    /// The longest reason sent (in UTF-8 bytes): what the peer sent is never echoed back in full.
    public static let maximumReasonLength = 256

    /// A rejection message.
    public init(code: String, reason: String) {
        self.code = code
        self.reason = reason
    }
}
