import COpenSSL
import Synchronization

/// One direction's frame key as a keyed HMAC-SHA256 context of libcrypto, reused for every frame.
///
/// The one-shot `HMAC()` fetches the algorithm and derives the inner and outer pads again for every
/// frame. This keeps one `EVP_MAC_CTX`, fetched and keyed once; each frame re-initialises it with a
/// null key, which restores the keyed state without re-keying (OpenSSL 3's HMAC provider), then
/// feeds the bytes. The context is guarded by a mutex, so copies of a sealer or opener that share it
/// stay safe on any thread. When libcrypto cannot create the context, every MAC throws `.crypto`.
final class FrameMACKey: Sendable {
    /// An `EVP_MAC_CTX` pointer. `@unchecked Sendable` because it is only ever used under the
    /// mutex `FrameMACKey.context`.
    private struct Context: @unchecked Sendable {
        var pointer: OpaquePointer?
    }

    /// The keyed context (nil pointer when libcrypto could not create it).
    private let context: Mutex<Context>

    init(_ key: [UInt8]) {
        context = Mutex(Context(pointer: Self.makeContext(key)))
    }

    deinit {
        context.withLock { context in
            if let pointer = context.pointer { EVP_MAC_CTX_free(pointer) }
            context.pointer = nil
        }
    }

    private static func makeContext(_ key: [UInt8]) -> OpaquePointer? {
        guard let algorithm = EVP_MAC_fetch(nil, "HMAC", nil) else { return nil }
        defer { EVP_MAC_free(algorithm) }
        guard let context = EVP_MAC_CTX_new(algorithm) else { return nil }
        // HMAC needs a key pointer even for an empty key.
        let material = key.isEmpty ? [UInt8(0)] : key
        let keyed = "SHA256".withCString { digestName in
            material.withUnsafeBufferPointer { keyBytes in
                var params = [
                    OSSL_PARAM_construct_utf8_string("digest", UnsafeMutablePointer(mutating: digestName), 0),
                    OSSL_PARAM_construct_end(),
                ]
                return EVP_MAC_init(context, keyBytes.baseAddress, key.count, &params) == 1
            }
        }
        guard keyed, EVP_MAC_CTX_get_mac_size(context) == HMACSHA256.size else {
            EVP_MAC_CTX_free(context)
            return nil
        }
        return context
    }

    /// Writes the MAC of `data` to `out` (at least 32 bytes).
    func mac(_ data: UnsafeRawBufferPointer, into out: UnsafeMutableRawBufferPointer) throws(WireError) {
        let ok = context.withLock { context -> Bool in
            guard let pointer = context.pointer, out.count >= HMACSHA256.size else { return false }
            guard EVP_MAC_init(pointer, nil, 0, nil) == 1 else { return false }
            if data.count > 0, EVP_MAC_update(pointer, data.baseAddress?.assumingMemoryBound(to: UInt8.self), data.count) != 1 {
                return false
            }
            var length = 0
            let done = EVP_MAC_final(pointer, out.baseAddress?.assumingMemoryBound(to: UInt8.self), &length, out.count)
            return done == 1 && length == HMACSHA256.size
        }
        guard ok else { throw WireError(.crypto, "HMAC-SHA256 failed in libcrypto") }
    }
}
