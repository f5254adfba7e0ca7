import CordisJSON

/// The handshake of one link (a `Link` runs it; see docs/wire-protocol.md for its messages). Public for
/// `Handshake.Side`, which end of it a link was, and `maxFrameSize`, the largest frame it accepts.
///
/// Inside the package it is a pure state machine, for the dialling side (`initiator`) or the accepting
/// side (`responder`): call `start()` once and send what it returns, then give every received message (or frame) to
/// `receive(_:)` and act on the step: send its messages; on `.established` switch to the result's
/// `sessionCodec()`; on `.failed` close the link after sending. Any message other than the next one
/// expected fails the handshake. Authenticated (secrets configured):
/// `hello → challenge → proof → welcome`; unauthenticated: `hello → welcome`; over TLS (`overTLS`),
/// `hello → welcome` with the `tls` scheme, each side's name checked against the name of the peer's
/// certificate (given with `certify(_:)` once the TLS session is up). The caller bounds the
/// handshake in time and its frames in size (`maxFrameSize`).
///
/// An authenticating responder tells a peer nothing about itself until that peer's proof verifies:
/// its `challenge` holds only a nonce, it checks the peer's role and name against its own only after
/// the proof, and every refusal before it reads the same to the peer whatever the node is. Its
/// identity travels in the `welcome`, bound by its proof.
public struct Handshake: Sendable {
    /// Which end of the link this side is.
    public enum Side: Sendable, Hashable {
        /// The side that dialled; it sends `hello` first.
        case initiator
        /// The side that accepted the connection.
        case responder
    }

    /// The size of a nonce in bytes.
    package static let nonceSize = 32

    /// The largest frame a link should accept before its handshake completes.
    public static let maxFrameSize = 64 * 1024

    private enum State: Sendable {
        case idle
        case awaitingHello
        case awaitingChallengeOrWelcome
        /// Initiator: `T_i` sent with the proof; the responder's identity comes in the welcome.
        case awaitingWelcomeProof(initiatorTranscript: [UInt8])
        /// Responder: the peer's claimed identity and `T_i`, until its proof verifies.
        case awaitingProof(peer: PeerIdentity, initiatorTranscript: [UInt8])
        case done
    }

    /// Which end this side is.
    package let side: Side
    /// Whether the link runs inside a TLS session: the `tls` scheme, no secret, no frame MAC.
    package let overTLS: Bool
    /// The name in the peer's verified certificate (set by `certify(_:)`).
    package private(set) var certificate: TLSPeerName?
    private let configuration: HandshakeConfiguration
    private let nonce: [UInt8]
    private var state: State = .idle
    /// The version the peer said it speaks, once its `hello` or `welcome` was read: a `reject` spells its
    /// code for it.
    private var peerVersion: ProtocolVersion?

    /// A handshake with a fresh random nonce; throws `.crypto` when no randomness is available.
    package init(side: Side, configuration: HandshakeConfiguration, overTLS: Bool = false) throws(WireError) {
        try self.init(
            side: side, configuration: configuration, nonce: HMACSHA256.randomBytes(Self.nonceSize), overTLS: overTLS)
    }

    /// A handshake with a given nonce. Only for tests and fixtures: a reused nonce lets a recorded
    /// handshake be replayed.
    package init(side: Side, configuration: HandshakeConfiguration, nonce: [UInt8], overTLS: Bool = false) {
        self.side = side
        self.overTLS = overTLS
        self.configuration = configuration
        self.nonce = nonce
    }

    /// True once the handshake has established the link or failed.
    package var isFinished: Bool {
        if case .done = state { return true }
        return false
    }

    private var local: PeerIdentity { configuration.identity }

    /// Records the name of the peer's certificate, verified by the TLS session; call it before giving
    /// the first message to `receive`.
    package mutating func certify(_ name: TLSPeerName) {
        certificate = name
    }

    /// Begins the handshake: the initiator's `hello`, or nothing for the responder.
    package mutating func start() -> [WireMessage] {
        guard case .idle = state else { return [] }
        switch side {
        case .initiator:
            state = .awaitingChallengeOrWelcome
            let auth: AuthenticationScheme = overTLS ? .tls : configuration.secrets == nil ? .none : .hmacSHA256
            return [.hello(Hello(identity: local, nonce: nonce, auth: auth))]
        case .responder:
            state = .awaitingHello
            return []
        }
    }

    /// Decodes `frame` and handles its message; a frame that does not decode fails the handshake
    /// (answered with a `reject`, for example on a version mismatch).
    package mutating func receive(_ frame: Frame) -> HandshakeStep {
        do throws(WireError) {
            return receive(try WireMessage(frame: frame))
        } catch {
            // A hello or welcome refused as it is read (a bad name, another major) may still say its
            // version, which the `reject` is spelled for.
            peerVersion = peerVersion ?? Self.statedVersion(in: frame)
            return fail(error, tell: true)
        }
    }

    /// The `version` the message in `frame` states, when it is a JSON object with a well-written one.
    private static func statedVersion(in frame: Frame) -> ProtocolVersion? {
        let parsed = frame.payload.withUnsafeBytes { try? JSONParser().parse($0) }
        guard case .object(let object)? = parsed, case .string(let text)? = object["version"] else { return nil }
        return ProtocolVersion(text)
    }

    /// Handles the next message from the peer.
    package mutating func receive(_ message: WireMessage) -> HandshakeStep {
        if case .idle = state { _ = start() }
        switch message {
        case .reject(let rejection):
            return fail(
                .rejected("peer refused the handshake", code: rejection.code, reason: rejection.reason, messageType: "reject"),
                tell: false)
        case .hello(let hello):
            peerVersion = hello.identity.version
        case .welcome(let welcome):
            peerVersion = welcome.identity?.version ?? peerVersion
        default:
            break
        }
        do throws(WireError) {
            switch (state, message) {
            case (.awaitingHello, .hello(let hello)) where overTLS:
                return try handleTLSHello(hello)
            case (.awaitingHello, .hello(let hello)):
                return try handleHello(hello)
            case (.awaitingChallengeOrWelcome, .welcome(let welcome)) where overTLS:
                return try handleTLSWelcome(welcome)
            case (.awaitingChallengeOrWelcome, .challenge) where overTLS:
                throw WireError(
                    .unexpectedMessage, "the peer sent a challenge inside TLS: a TLS link takes no secret",
                    messageType: "challenge")
            case (.awaitingChallengeOrWelcome, .challenge(let challenge)):
                return try handleChallenge(challenge)
            case (.awaitingChallengeOrWelcome, .welcome(let welcome)):
                return try handleUnauthenticatedWelcome(welcome)
            case (.awaitingWelcomeProof(let transcript), .welcome(let welcome)):
                return try handleWelcomeProof(welcome, initiatorTranscript: transcript)
            case (.awaitingProof(let peer, let transcript), .proof(let proof)):
                return try handleProof(proof, peer: peer, initiatorTranscript: transcript)
            case (.done, _):
                return fail(WireError(.unexpectedMessage, "the handshake is already over", messageType: message.type), tell: false)
            default:
                return fail(WireError(
                    .unexpectedMessage, "unexpected \"\(message.type.prefix(64))\" message in the handshake",
                    messageType: message.type), tell: true)
            }
        } catch {
            return fail(error, tell: true)
        }
    }

    // MARK: - TLS

    private mutating func handleTLSHello(_ hello: Hello) throws(WireError) -> HandshakeStep {
        try checkShape(hello.identity, messageType: "hello")
        try checkNonce(hello.nonce, messageType: "hello")
        guard hello.auth == .tls else {
            throw WireError(
                .authenticationRequired,
                "the peer offers \(hello.auth) authentication inside TLS; a TLS link uses the tls scheme",
                messageType: "hello")
        }
        try checkCertificate(of: hello.identity, messageType: "hello")
        try checkAdmission(hello.identity, messageType: "hello")
        try admit(hello.identity)
        state = .done
        return .established(
            send: [.welcome(Welcome(identity: local))],
            HandshakeResult(
                peer: hello.identity, version: min(hello.identity.version, local.version), keys: nil,
                certificate: certificate))
    }

    private mutating func handleTLSWelcome(_ welcome: Welcome) throws(WireError) -> HandshakeStep {
        guard let peer = welcome.identity, welcome.proof == nil else {
            throw WireError(.invalidField, "a welcome inside TLS must carry the peer's identity and no proof",
                            messageType: "welcome")
        }
        try checkShape(peer, messageType: "welcome")
        try checkCertificate(of: peer, messageType: "welcome")
        try checkAdmission(peer, messageType: "welcome")
        try admit(peer)
        state = .done
        return .established(
            send: [],
            HandshakeResult(peer: peer, version: min(peer.version, local.version), keys: nil, certificate: certificate))
    }

    /// The peer's handshake name is its certificate's: `cordis://node/NAME` for a node,
    /// `cordis://operator/NAME` for a console.
    private func checkCertificate(of peer: PeerIdentity, messageType: String) throws(WireError) {
        guard let certificate else {
            throw WireError(.authenticationRequired, "the TLS session holds no verified certificate", messageType: messageType)
        }
        let kind: TLSPeerName.Kind = peer.role == .console ? .operator : .node
        let claimed = TLSPeerName(kind, peer.name)
        guard certificate == claimed else {
            throw WireError(
                .notAdmitted,
                "the peer's handshake names \(claimed) but its certificate names \(certificate)",
                messageType: messageType)
        }
    }

    // MARK: - Responder

    private mutating func handleHello(_ hello: Hello) throws(WireError) -> HandshakeStep {
        try checkShape(hello.identity, messageType: "hello")
        try checkNonce(hello.nonce, messageType: "hello")
        guard configuration.secrets != nil else {
            guard hello.auth == .none else {
                throw WireError(
                    .authenticationRequired,
                    "peer offers \(hello.auth) authentication but this side has no secret configured",
                    messageType: "hello")
            }
            try checkAdmission(hello.identity, messageType: "hello")
            try admit(hello.identity)
            state = .done
            let version = min(hello.identity.version, local.version)
            return .established(
                send: [.welcome(Welcome(identity: local))],
                HandshakeResult(peer: hello.identity, version: version, keys: nil))
        }
        guard hello.auth == .hmacSHA256 else {
            throw WireError(
                .authenticationRequired,
                "this side requires hmac-sha256 authentication; configure the cluster secret on the peer",
                messageType: "hello")
        }
        guard hello.identity.version >= Self.authenticatedMinimum else {
            throw WireError(
                .versionMismatch,
                "the authenticated handshake needs protocol \(Self.authenticatedMinimum) or later; the peer speaks "
                    + "\(hello.identity.version)", messageType: "hello")
        }
        // Nothing about this side yet: its role and name checks wait for the peer's proof.
        let transcript = KeySchedule.initiatorTranscript(
            initiator: hello.identity, initiatorNonce: hello.nonce, responderNonce: nonce)
        state = .awaitingProof(peer: hello.identity, initiatorTranscript: transcript)
        return .proceed(send: [.challenge(Challenge(nonce: nonce))])
    }

    private mutating func handleProof(
        _ proof: [UInt8], peer: PeerIdentity, initiatorTranscript: [UInt8]
    ) throws(WireError) -> HandshakeStep {
        guard let secrets = configuration.secrets else {
            throw WireError(.unexpectedMessage, "no proof expected", messageType: "proof")
        }
        var matched: ClusterSecret?
        for secret in secrets.accepted {
            let expected = try KeySchedule.proof(initiator: true, secret: secret, transcript: initiatorTranscript)
            if HMACSHA256.equal(expected, proof) { matched = secret }
        }
        guard let matched else {
            throw WireError(.badMAC, "the peer's proof does not verify: authentication failed", messageType: "proof")
        }
        try checkAdmission(peer, messageType: "hello")
        try admit(peer)
        let transcript = KeySchedule.transcript(initiatorTranscript: initiatorTranscript, responder: local)
        let answer = try KeySchedule.proof(initiator: false, secret: secrets.proving, transcript: transcript)
        let keys = try KeySchedule.sessionKeys(secret: matched, transcript: transcript, forInitiator: false)
        state = .done
        return .established(
            send: [.welcome(Welcome(identity: local, proof: answer))],
            HandshakeResult(peer: peer, version: min(peer.version, local.version), keys: keys))
    }

    // MARK: - Initiator

    private mutating func handleChallenge(_ challenge: Challenge) throws(WireError) -> HandshakeStep {
        guard let secrets = configuration.secrets else {
            throw WireError(
                .authenticationRequired,
                "peer requires authentication but this side has no secret configured", messageType: "challenge")
        }
        try checkNonce(challenge.nonce, messageType: "challenge")
        let transcript = KeySchedule.initiatorTranscript(
            initiator: local, initiatorNonce: nonce, responderNonce: challenge.nonce)
        let proof = try KeySchedule.proof(initiator: true, secret: secrets.proving, transcript: transcript)
        state = .awaitingWelcomeProof(initiatorTranscript: transcript)
        return .proceed(send: [.proof(proof)])
    }

    private mutating func handleWelcomeProof(
        _ welcome: Welcome, initiatorTranscript: [UInt8]
    ) throws(WireError) -> HandshakeStep {
        guard let secrets = configuration.secrets, let proof = welcome.proof else {
            throw WireError(.badMAC, "the peer's welcome carries no proof", messageType: "welcome")
        }
        guard let peer = welcome.identity else {
            throw WireError(
                .invalidField, "the welcome carries no identity (the peer speaks a protocol before 1.2)",
                messageType: "welcome")
        }
        let transcript = KeySchedule.transcript(initiatorTranscript: initiatorTranscript, responder: peer)
        var verified = false
        for secret in secrets.accepted {
            let expected = try KeySchedule.proof(initiator: false, secret: secret, transcript: transcript)
            if HMACSHA256.equal(expected, proof) { verified = true }
        }
        guard verified else {
            throw WireError(.badMAC, "the peer's proof does not verify: authentication failed", messageType: "welcome")
        }
        try check(peer, messageType: "welcome")
        try admit(peer)
        let keys = try KeySchedule.sessionKeys(secret: secrets.proving, transcript: transcript, forInitiator: true)
        state = .done
        return .established(send: [], HandshakeResult(peer: peer, version: min(peer.version, local.version), keys: keys))
    }

    private mutating func handleUnauthenticatedWelcome(_ welcome: Welcome) throws(WireError) -> HandshakeStep {
        guard configuration.secrets == nil else {
            throw WireError(
                .authenticationRequired, "peer did not authenticate but this side requires it", messageType: "welcome")
        }
        guard let peer = welcome.identity, welcome.proof == nil else {
            throw WireError(.invalidField, "an unauthenticated welcome must carry the peer's identity and no proof",
                            messageType: "welcome")
        }
        try check(peer, messageType: "welcome")
        try admit(peer)
        state = .done
        return .established(send: [], HandshakeResult(peer: peer, version: min(peer.version, local.version), keys: nil))
    }

    // MARK: - Checks

    /// The oldest version an authenticating responder accepts: 1.0 responders revealed their identity
    /// in the challenge, and their proofs cover another transcript.
    static let authenticatedMinimum = ProtocolVersion(major: 1, minor: 2)

    private func check(_ peer: PeerIdentity, messageType: String) throws(WireError) {
        try checkShape(peer, messageType: messageType)
        try checkAdmission(peer, messageType: messageType)
    }

    /// What the peer sent is well formed: compatible version, valid name and incarnation. Says nothing
    /// about this side.
    private func checkShape(_ peer: PeerIdentity, messageType: String) throws(WireError) {
        guard peer.version.isCompatible(with: local.version) else {
            throw WireError(
                .versionMismatch, "peer speaks protocol version \(peer.version); this side speaks \(local.version.major).x",
                messageType: messageType)
        }
        try PeerName.validate(peer.name, as: "peer name")
        guard !peer.incarnation.isEmpty, peer.incarnation.utf8.count <= PeerIdentity.maximumIncarnationLength else {
            throw WireError(.invalidField, "incarnation must be 1–128 bytes", messageType: messageType)
        }
    }

    /// Whether this side admits the peer's role and name; tells the peer about this side, so an
    /// authenticating responder runs it only after the peer's proof.
    private func checkAdmission(_ peer: PeerIdentity, messageType: String) throws(WireError) {
        guard configuration.acceptedRoles.contains(peer.role) else {
            throw WireError(.notAdmitted, "peer role \"\(peer.role.rawValue.prefix(32))\" is not accepted here",
                            messageType: messageType)
        }
        guard peer.name != local.name else {
            throw WireError(.notAdmitted, "peer uses this side's own name \"\(peer.name)\"", messageType: messageType)
        }
    }

    private func checkNonce(_ peerNonce: [UInt8], messageType: String) throws(WireError) {
        guard peerNonce.count == Self.nonceSize else {
            throw WireError(.invalidField, "nonce must be \(Self.nonceSize) bytes", messageType: messageType)
        }
        guard !HMACSHA256.equal(peerNonce, nonce) else {
            throw WireError(.replay, "peer echoed this side's nonce", messageType: messageType)
        }
    }

    private func admit(_ peer: PeerIdentity) throws(WireError) {
        if let rejection = configuration.admit?(peer) {
            throw WireError(WireError.Code(wire: rejection.code), rejection.reason)
        }
    }

    private mutating func fail(_ error: WireError, tell: Bool) -> HandshakeStep {
        state = .done
        guard tell else { return .failed(send: [], error) }
        // Tell the peer why, without detail that helps an unauthenticated prober and without echoing
        // its input back in full.
        let reason: String
        switch error.code {
        case .badMAC: reason = "authentication failed"
        default: reason = BoundedText.clip(error.message, limit: Rejection.maximumReasonLength)
        }
        let code = BoundedText.clip(error.code.spelled(for: peerVersion), limit: 64)
        let bounded = WireError(
            error.code, BoundedText.clip(error.message, limit: 1024), offset: error.offset,
            messageType: error.messageType.map { BoundedText.clip($0, limit: 64) })
        return .failed(send: [.reject(Rejection(code: code, reason: reason))], bounded)
    }
}
