/// The two frame-MAC keys of an authenticated link, one per direction, derived in the handshake.
///
/// Each side sends with `sending` and verifies with `receiving`; the initiator's `sending` is the
/// responder's `receiving`. The keys never leave the process; `description` hides them.
package struct SessionKeys: Sendable, Hashable, CustomStringConvertible {
    /// The key MACing frames this side sends.
    let sending: [UInt8]
    /// The key verifying frames this side receives.
    let receiving: [UInt8]

    init(sending: [UInt8], receiving: [UInt8]) {
        self.sending = sending
        self.receiving = receiving
    }

    package var description: String { "SessionKeys(hidden)" }
}

/// The key schedule of the handshake (protocol 1.2): proofs and session keys bound to the direction,
/// both nonces and the sides' whole identities: names, roles, incarnations, versions, addresses,
/// capabilities (see docs/wire-protocol.md, "Authentication").
///
/// The responder reveals its identity only in the `welcome`, after the initiator's proof verified, so
/// the initiator's proof covers `T_i` (both nonces and the initiator's identity) and the responder's
/// proof and the session keys cover `T = T_i || identity(responder)`. The initiator's first sealed
/// frame, MACed with a key derived from `T`, confirms it saw the same responder identity.
enum KeySchedule {
    static let initiatorProofLabel = "cordis/1.2 initiator proof"
    static let responderProofLabel = "cordis/1.2 responder proof"
    static let sessionLabel = "cordis/1.2 session"
    static let initiatorFramesLabel = "cordis/1 frames initiator to responder"
    static let responderFramesLabel = "cordis/1 frames responder to initiator"

    /// `T_i`: both nonces, then the initiator's identity.
    static func initiatorTranscript(initiator: PeerIdentity, initiatorNonce: [UInt8], responderNonce: [UInt8]) -> [UInt8] {
        var bytes = initiatorNonce + responderNonce
        appendIdentity(initiator, to: &bytes)
        return bytes
    }

    /// `T`: `T_i` followed by the responder's identity.
    static func transcript(initiatorTranscript: [UInt8], responder: PeerIdentity) -> [UInt8] {
        var bytes = initiatorTranscript
        appendIdentity(responder, to: &bytes)
        return bytes
    }

    /// `T` from its parts.
    static func transcript(
        initiator: PeerIdentity, initiatorNonce: [UInt8], responder: PeerIdentity, responderNonce: [UInt8]
    ) -> [UInt8] {
        transcript(
            initiatorTranscript: initiatorTranscript(
                initiator: initiator, initiatorNonce: initiatorNonce, responderNonce: responderNonce),
            responder: responder)
    }

    /// `lp(name) lp(role) lp(incarnation) lp(version) ls(addresses) ls(capabilities)`.
    private static func appendIdentity(_ identity: PeerIdentity, to bytes: inout [UInt8]) {
        for field in [identity.name, identity.role.rawValue, identity.incarnation, identity.version.description] {
            appendLengthPrefixed(field, to: &bytes)
        }
        for list in [identity.addresses, identity.capabilities] {
            let items = list.prefix(0xFFFF)
            appendLength(items.count, to: &bytes)
            for item in items { appendLengthPrefixed(item, to: &bytes) }
        }
    }

    /// `lp(s)`: the UTF-8 bytes of `field` (at most 65 535 of them) after their count as two bytes,
    /// big-endian.
    private static func appendLengthPrefixed(_ field: String, to bytes: inout [UInt8]) {
        let utf8 = field.utf8.prefix(0xFFFF)
        appendLength(utf8.count, to: &bytes)
        bytes.append(contentsOf: utf8)
    }

    private static func appendLength(_ count: Int, to bytes: inout [UInt8]) {
        bytes.append(UInt8(truncatingIfNeeded: count >> 8))
        bytes.append(UInt8(truncatingIfNeeded: count))
    }

    static func labelled(_ label: String, _ transcript: [UInt8]) -> [UInt8] {
        Array(label.utf8) + [0] + transcript
    }

    static func proof(initiator isInitiator: Bool, secret: ClusterSecret, transcript: [UInt8]) throws(WireError) -> [UInt8] {
        let label = isInitiator ? initiatorProofLabel : responderProofLabel
        return try HMACSHA256.mac(key: secret.bytes, data: labelled(label, transcript))
    }

    /// The session keys as seen by the initiator (`forInitiator`) or the responder.
    static func sessionKeys(secret: ClusterSecret, transcript: [UInt8], forInitiator: Bool) throws(WireError) -> SessionKeys {
        let master = try HMACSHA256.mac(key: secret.bytes, data: labelled(sessionLabel, transcript))
        let initiatorToResponder = try HMACSHA256.mac(key: master, data: Array(initiatorFramesLabel.utf8))
        let responderToInitiator = try HMACSHA256.mac(key: master, data: Array(responderFramesLabel.utf8))
        return forInitiator
            ? SessionKeys(sending: initiatorToResponder, receiving: responderToInitiator)
            : SessionKeys(sending: responderToInitiator, receiving: initiatorToResponder)
    }
}
