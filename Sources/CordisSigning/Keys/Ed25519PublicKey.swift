import COpenSSL

/// An Ed25519 public key: 32 raw bytes, read from PEM (`-----BEGIN PUBLIC KEY-----`) and checked by
/// libcrypto. Its `keyId` is the lower-case hex of the first 8 bytes of SHA-256 over the raw bytes.
public struct Ed25519PublicKey: Sendable, Hashable {
    /// The 32 raw public-key bytes.
    public let raw: [UInt8]

    /// A key from its 32 raw bytes.
    ///
    /// - Throws: `SigningError` when they are not 32 bytes or libcrypto refuses them.
    public init(raw: [UInt8]) throws(SigningError) {
        guard raw.count == 32 else { throw SigningError("an Ed25519 public key is 32 bytes, not \(raw.count)") }
        guard let key = EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, nil, raw, raw.count) else {
            throw SigningError("libcrypto refused the Ed25519 public key")
        }
        EVP_PKEY_free(key)
        self.raw = raw
    }

    /// Every Ed25519 public key in a PEM text, in order.
    ///
    /// - Throws: `SigningError` when the text holds no key, a key that is not Ed25519, or a block
    ///   libcrypto cannot read.
    public static func all(inPEM text: [UInt8]) throws(SigningError) -> [Ed25519PublicKey] {
        let keys = try PEMKeys.read(text, what: "public key") { bio in PEM_read_bio_PUBKEY(bio, nil, nil, nil) }
        var result: [Ed25519PublicKey] = []
        for key in keys {
            defer { EVP_PKEY_free(key) }
            result.append(try Ed25519PublicKey(raw: try PEMKeys.rawPublic(key)))
        }
        guard !result.isEmpty else { throw SigningError("no PEM public key (-----BEGIN PUBLIC KEY-----) found") }
        return result
    }

    /// The key id: lower-case hex of the first 8 bytes of SHA-256 over the raw bytes.
    public var keyID: String {
        var digest = [UInt8](repeating: 0, count: 32)
        var length: UInt32 = 0
        _ = EVP_Digest(raw, raw.count, &digest, &length, EVP_sha256(), nil)
        return digest.prefix(8).map { byte in
            let text = String(byte, radix: 16)
            return text.count == 1 ? "0" + text : text
        }.joined()
    }

    /// Whether `signature` is this key's Ed25519 signature of `message`.
    public func verifies(_ signature: [UInt8], of message: [UInt8]) -> Bool {
        guard signature.count == 64, let key = EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, nil, raw, raw.count) else {
            return false
        }
        defer { EVP_PKEY_free(key) }
        guard let context = EVP_MD_CTX_new() else { return false }
        defer { EVP_MD_CTX_free(context) }
        guard EVP_DigestVerifyInit(context, nil, nil, nil, key) == 1 else { return false }
        let verdict = EVP_DigestVerify(context, signature, signature.count, message, message.count)
        ERR_clear_error()
        return verdict == 1
    }
}
