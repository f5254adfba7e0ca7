import CordisFiles

/// The public keys whose signed trees a node applies (`--trusted-keys FILE`: one or more PEM
/// Ed25519 public keys), by key id.
public struct TrustedKeys: Sendable, Hashable {
    /// The keys, by id.
    public var keys: [String: Ed25519PublicKey]

    /// A set of keys.
    public init(_ keys: [Ed25519PublicKey]) {
        var byID: [String: Ed25519PublicKey] = [:]
        for key in keys { byID[key.keyID] = key }
        self.keys = byID
    }

    /// The key with `id`, if trusted.
    public func key(id: String) -> Ed25519PublicKey? { keys[id] }

    /// Reads the keys of a PEM file.
    ///
    /// - Throws: `SigningError` naming the file when it cannot be read or holds no Ed25519 public key.
    public static func load(path: String) throws(SigningError) -> TrustedKeys {
        let file: RegularFile?
        do {
            file = try RegularFile.read(path, maxSize: 1 << 20)
        } catch {
            throw SigningError("trusted keys \(path): \(error)")
        }
        guard let file else { throw SigningError("trusted keys \(path): no such file") }
        do {
            return TrustedKeys(try Ed25519PublicKey.all(inPEM: file.bytes))
        } catch {
            throw SigningError("trusted keys \(path): \(error.message)")
        }
    }
}
