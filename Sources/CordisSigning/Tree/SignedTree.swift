import CordisJSON

/// A signed plugin tree: the envelope `{"keyId", "payload", "signature"}`, where `payload` is the
/// base64url of the exact payload bytes and `signature` the base64url of their Ed25519 signature.
public struct SignedTree: Sendable, Hashable {
    /// The largest payload accepted: 256 KiB.
    public static let maximumPayloadBytes = 256 * 1024
    /// The largest envelope accepted (the payload's base64url and a little more).
    public static let maximumEnvelopeBytes = maximumPayloadBytes * 4 / 3 + 4096
    /// The clock skew allowed on either side of the validity window: 5 minutes.
    public static let allowedSkew = 300.0

    /// The id of the key that signed it (see `Ed25519PublicKey.keyID`).
    public var keyID: String
    /// The exact payload bytes the signature covers.
    public var payload: [UInt8]
    /// The 64-byte Ed25519 signature.
    public var signature: [UInt8]

    /// An envelope.
    public init(keyID: String, payload: [UInt8], signature: [UInt8]) {
        self.keyID = keyID
        self.payload = payload
        self.signature = signature
    }

    /// Signs `payload` with `key`.
    ///
    /// - Throws: `SigningError` when libcrypto cannot sign.
    public init(signing payload: SignedTreePayload, with key: Ed25519PrivateKey) throws(SigningError) {
        let bytes = payload.serialized()
        self.init(keyID: key.publicKey.keyID, payload: bytes, signature: try key.sign(bytes))
    }

    /// The envelope as a JSON object.
    public var json: JSONValue {
        .object([
            "keyId": .string(keyID), "payload": .string(Base64URL.encode(payload)),
            "signature": .string(Base64URL.encode(signature)),
        ])
    }

    /// Reads an envelope from JSON, checking its size and shape (not its signature).
    ///
    /// - Throws: `SignedTreeError` `.size` or `.shape`.
    public init(json value: JSONValue) throws(SignedTreeError) {
        guard value.jsonString(.compact).utf8.count <= Self.maximumEnvelopeBytes else {
            throw SignedTreeError(.size, "the envelope is larger than \(Self.maximumEnvelopeBytes) bytes")
        }
        guard case .object(let object) = value else {
            throw SignedTreeError(.shape, "the envelope must be a JSON object with keyId, payload and signature")
        }
        guard case .string(let keyID)? = object["keyId"], !keyID.isEmpty, keyID.utf8.count <= 64 else {
            throw SignedTreeError(.shape, "the envelope's keyId must be a string of 1-64 characters")
        }
        guard case .string(let payloadText)? = object["payload"], let payload = Base64URL.decode(payloadText) else {
            throw SignedTreeError(.shape, "the envelope's payload must be base64url text")
        }
        guard case .string(let signatureText)? = object["signature"], let signature = Base64URL.decode(signatureText),
            signature.count == 64
        else {
            throw SignedTreeError(.shape, "the envelope's signature must be the base64url of 64 bytes")
        }
        self.init(keyID: keyID, payload: payload, signature: signature)
    }

    /// Reads an envelope from a file's bytes (see `init(json:)`).
    public init(parsing bytes: [UInt8]) throws(SignedTreeError) {
        guard bytes.count <= Self.maximumEnvelopeBytes else {
            throw SignedTreeError(.size, "the document is larger than \(Self.maximumEnvelopeBytes) bytes")
        }
        let value: JSONValue
        do {
            value = try JSONParser().parse(bytes)
        } catch {
            throw SignedTreeError(.shape, "the envelope is not JSON: \(error)")
        }
        try self.init(json: value)
    }

    /// The highest version a tree may carry at `now` (seconds since 1970): the time in milliseconds, plus
    /// the allowed skew. `cordis-console sign` uses the signing time in milliseconds by default; a version
    /// beyond it would leave no later tree newer.
    public static func latestVersion(at now: Double) -> Int64 {
        let milliseconds = ((now + allowedSkew) * 1000).rounded(.down)
        guard milliseconds.isFinite, milliseconds >= 0 else { return 0 }
        return milliseconds >= 9.2e18 ? Int64.max : Int64(milliseconds)
    }

    /// Checks the tree, rule by rule in the documented order, for node `node` at time `now` (seconds
    /// since 1970), against `trusted` keys and the last version applied; returns its payload. Its
    /// content (the entries) is the node's to check.
    ///
    /// - Throws: `SignedTreeError` naming the first rule broken.
    public func verify(
        trusted: TrustedKeys, node: String, now: Double, lastVersion: Int64
    ) throws(SignedTreeError) -> SignedTreePayload {
        guard payload.count <= Self.maximumPayloadBytes else {
            throw SignedTreeError(.size, "the payload is \(payload.count) bytes; at most \(Self.maximumPayloadBytes)")
        }
        guard let key = trusted.key(id: keyID) else {
            throw SignedTreeError(.signature, "key \(keyID) is not among the trusted keys")
        }
        guard key.verifies(signature, of: payload) else {
            throw SignedTreeError(.signature, "the signature does not verify with trusted key \(keyID)")
        }
        let parsed = try SignedTreePayload(parsing: payload)
        guard parsed.node == node else {
            throw SignedTreeError(.node, "the tree is for node \(parsed.node.prefix(64)), not \(node)")
        }
        if now + Self.allowedSkew < parsed.issuedAt {
            throw SignedTreeError(.window, "not yet valid: issued at \(RFC3339.format(SignedTreePayload.wholeSeconds(parsed.issuedAt)))")
        }
        if now - Self.allowedSkew > parsed.expiresAt {
            throw SignedTreeError(.window, "expired at \(RFC3339.format(SignedTreePayload.wholeSeconds(parsed.expiresAt)))")
        }
        guard parsed.version <= Self.latestVersion(at: now) else {
            throw SignedTreeError(
                .freshness,
                "version \(parsed.version) is later than now: a version is at most the signing time in milliseconds since "
                    + "1970 (\(Self.latestVersion(at: now)) here, with the allowed skew)")
        }
        guard parsed.version > lastVersion else {
            throw SignedTreeError(
                .freshness, "version \(parsed.version) is not newer than version \(lastVersion), the last one applied")
        }
        return parsed
    }
}
