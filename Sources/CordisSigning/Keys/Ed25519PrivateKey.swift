import COpenSSL

/// An Ed25519 private key read from PEM (`-----BEGIN PRIVATE KEY-----`, as
/// `openssl genpkey -algorithm ed25519` writes it), which signs with libcrypto.
public struct Ed25519PrivateKey: Sendable {
    private let raw: [UInt8]
    /// The matching public key.
    public let publicKey: Ed25519PublicKey

    /// The key in a PEM text.
    ///
    /// - Throws: `SigningError` when the text holds no private key or one that is not Ed25519
    ///   (encrypted keys are not supported).
    public init(pem text: [UInt8]) throws(SigningError) {
        let keys = try PEMKeys.read(text, what: "private key", limit: 1) { bio in PEM_read_bio_PrivateKey(bio, nil, nil, nil) }
        guard let key = keys.first else {
            throw SigningError("no PEM private key (-----BEGIN PRIVATE KEY-----) found")
        }
        defer { EVP_PKEY_free(key) }
        guard EVP_PKEY_get_id(key) == EVP_PKEY_ED25519 else { throw SigningError("the private key is not an Ed25519 key") }
        var raw = [UInt8](repeating: 0, count: 32)
        var length = raw.count
        guard EVP_PKEY_get_raw_private_key(key, &raw, &length) == 1, length == 32 else {
            throw SigningError("cannot read the Ed25519 private key")
        }
        self.raw = raw
        self.publicKey = try Ed25519PublicKey(raw: try PEMKeys.rawPublic(key))
    }

    /// The Ed25519 signature of `message` (64 bytes).
    ///
    /// - Throws: `SigningError` when libcrypto fails.
    public func sign(_ message: [UInt8]) throws(SigningError) -> [UInt8] {
        guard let key = EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, nil, raw, raw.count) else {
            throw SigningError("libcrypto refused the Ed25519 private key")
        }
        defer { EVP_PKEY_free(key) }
        guard let context = EVP_MD_CTX_new() else { throw SigningError("libcrypto is out of memory") }
        defer { EVP_MD_CTX_free(context) }
        var signature = [UInt8](repeating: 0, count: 64)
        var length = signature.count
        guard EVP_DigestSignInit(context, nil, nil, nil, key) == 1,
            EVP_DigestSign(context, &signature, &length, message, message.count) == 1, length == 64
        else {
            ERR_clear_error()
            throw SigningError("libcrypto could not sign")
        }
        return signature
    }
}

/// Reading keys out of PEM text with libcrypto.
enum PEMKeys {
    /// Every key `read` finds in `text`, up to `limit`. The caller frees each.
    static func read(
        _ text: [UInt8], what: String, limit: Int = 64, _ read: (OpaquePointer) -> OpaquePointer?
    ) throws(SigningError) -> [OpaquePointer] {
        guard text.count <= 1 << 20 else { throw SigningError("the \(what) file is larger than 1 MiB") }
        guard let bio = text.withUnsafeBytes({ BIO_new_mem_buf($0.baseAddress, Int32($0.count)) }) else {
            throw SigningError("libcrypto is out of memory")
        }
        defer { BIO_free(bio) }
        var keys: [OpaquePointer] = []
        while keys.count < limit, let key = read(bio) { keys.append(key) }
        // The loop ends on the first block that is not a key (or the end): only the end is fine.
        let failure = ERR_peek_last_error()
        ERR_clear_error()
        let rest = BIO_ctrl(bio, BIO_CTRL_PENDING, 0, nil)
        if failure != 0, rest > 0 || keys.isEmpty {
            let hasBlock = String(decoding: text, as: UTF8.self).contains("-----BEGIN")
            for key in keys { EVP_PKEY_free(key) }
            if !hasBlock { return [] }
            throw SigningError("a PEM block is not a readable \(what)")
        }
        return keys
    }

    /// The 32 raw public bytes of an Ed25519 key.
    static func rawPublic(_ key: OpaquePointer) throws(SigningError) -> [UInt8] {
        guard EVP_PKEY_get_id(key) == EVP_PKEY_ED25519 else { throw SigningError("a key is not an Ed25519 key") }
        var raw = [UInt8](repeating: 0, count: 32)
        var length = raw.count
        guard EVP_PKEY_get_raw_public_key(key, &raw, &length) == 1, length == 32 else {
            throw SigningError("cannot read an Ed25519 public key")
        }
        return raw
    }
}
