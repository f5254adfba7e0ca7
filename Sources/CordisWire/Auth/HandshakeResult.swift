/// What a completed handshake established: the peer, the version spoken, and the frame keys.
public struct HandshakeResult: Sendable, Hashable {
    /// The peer's identity as it sent it (authenticated when `keys` is set).
    public let peer: PeerIdentity
    /// The version both sides speak: the same major, the lower minor.
    public let version: ProtocolVersion
    /// The frame-MAC keys; nil for an unauthenticated link and under TLS.
    package let keys: SessionKeys?
    /// The name in the peer's TLS certificate, which its handshake name matched; nil without TLS.
    public let certificate: TLSPeerName?

    /// A result.
    package init(peer: PeerIdentity, version: ProtocolVersion, keys: SessionKeys?, certificate: TLSPeerName? = nil) {
        self.peer = peer
        self.version = version
        self.keys = keys
        self.certificate = certificate
    }

    /// True when both sides proved knowledge of a cluster secret.
    public var isAuthenticated: Bool { keys != nil }

    /// True when the link runs inside TLS with both certificates verified.
    public var isTLS: Bool { certificate != nil }

    /// A codec for the link's frames after the handshake (MACed and sequenced when authenticated).
    package func sessionCodec(maxFrameSize: Int = Frame.defaultMaxSize) -> SessionCodec {
        SessionCodec(keys: keys, maxFrameSize: maxFrameSize, version: version)
    }
}

/// What the owner of a link does after giving a message to `Handshake.receive`.
package enum HandshakeStep: Sendable {
    /// Send these messages and wait for the next one.
    case proceed(send: [WireMessage])
    /// Send these messages; the link is up.
    case established(send: [WireMessage], HandshakeResult)
    /// Send these messages (a `reject`, or none), then close the link.
    case failed(send: [WireMessage], WireError)

    /// The messages to send, whatever the outcome.
    package var messages: [WireMessage] {
        switch self {
        case .proceed(let send), .established(let send, _), .failed(let send, _): return send
        }
    }
}
