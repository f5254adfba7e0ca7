import COpenSSL
import CCordisShim
#if canImport(Glibc)
import Glibc
#endif

/// HMAC-SHA256 (see `Key`) and constant-time comparison through libcrypto, and random bytes from the kernel.
enum HMACSHA256 {
    /// The size of a MAC in bytes.
    static let size = 32

    /// The MAC of `data` under `key`.
    static func mac(key: [UInt8], data: UnsafeRawBufferPointer) throws(WireError) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: size)
        let keyed = Key(key)
        // withUnsafeMutableBytes cannot rethrow a typed error, so carry it out by value.
        let result: Result<Void, WireError> = out.withUnsafeMutableBytes { bytes in
            do throws(WireError) {
                try keyed.mac(data, into: bytes)
                return .success(())
            } catch {
                return .failure(error)
            }
        }
        try result.get()
        return out
    }

    /// The MAC of `data` under `key`.
    static func mac(key: [UInt8], data: [UInt8]) throws(WireError) -> [UInt8] {
        try mac(key: key, data: data, range: data.startIndex ..< data.endIndex)
    }

    /// The MAC of `data[range]` under `key`.
    static func mac(key: [UInt8], data: [UInt8], range: Range<Int>) throws(WireError) -> [UInt8] {
        // withUnsafeBytes cannot rethrow a typed error, so carry it out by value.
        let result: Result<[UInt8], WireError> = data.withUnsafeBytes { bytes in
            do throws(WireError) {
                return .success(try mac(key: key, data: UnsafeRawBufferPointer(rebasing: bytes[range])))
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    /// True when `a` and `b` have the same length and bytes, compared in constant time.
    static func equal(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        if a.isEmpty { return true }
        return a.withUnsafeBytes { left in
            b.withUnsafeBytes { right in
                CRYPTO_memcmp(left.baseAddress, right.baseAddress, left.count) == 0
            }
        }
    }

    /// `count` bytes from the kernel's cryptographically secure generator (`getrandom(2)`, the source
    /// libcrypto's own generator seeds from). Not libcrypto's `RAND_bytes`: the first call of that sets
    /// up its generator and providers, about 2 MB resident, in every node, even one whose links use no
    /// secret and no TLS and so never need libcrypto otherwise.
    static func randomBytes(_ count: Int) throws(WireError) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        var filled = 0
        var failure: Int32 = 0
        bytes.withUnsafeMutableBytes { buffer in
            guard let base = buffer.baseAddress else { return }
            // Bounded: each turn fills at least one byte or ends the loop.
            while filled < buffer.count {
                let got = ccordis_random(base + filled, buffer.count - filled)
                if got > 0 {
                    filled += got
                } else if got < 0, errno == EINTR {
                    continue
                } else {
                    failure = got < 0 ? errno : EIO
                    return
                }
            }
        }
        guard filled == count else { throw WireError(.crypto, "getrandom could not produce random bytes (errno \(failure))") }
        return bytes
    }
}
