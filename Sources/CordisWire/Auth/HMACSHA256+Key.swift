import COpenSSL

extension HMACSHA256 {
    /// An HMAC-SHA256 key (RFC 2104) whose padded inner and outer blocks are already hashed: a MAC copies
    /// the two SHA-256 states (plain values), hashes the data into the inner one and the inner digest into
    /// the outer one.
    ///
    /// It runs on libcrypto's low-level SHA-256, the same assembly EVP dispatches to. EVP's HMAC, even with
    /// one keyed context re-initialised per frame, copies its digest context through the provider for every
    /// MAC (an allocation, a copy, a cleanse, under a lock here), which cost more than hashing a call's frame
    /// and ran through far more code (see docs/performance.md). The key is immutable, so any number of
    /// threads share it without a lock. A class, so the codecs that hold one stay small values (its two
    /// states are 224 bytes); the key-derived states are wiped when it is freed (a MAC's own copies have
    /// hashed the frame by the time it returns, and `SHA256_Final` wipes their buffered block).
    final class Key: @unchecked Sendable {
        // `@unchecked Sendable`: the two states are written once, in `init`, and only copied from after
        // (each MAC hashes into its own copies), until `deinit` wipes them.

        /// The SHA-256 state after the key XOR ipad block (`[0]`), and after the key XOR opad block (`[1]`).
        private let states: UnsafeMutablePointer<SHA256_CTX>

        /// The SHA-256 input block size, which the key is padded (or first hashed) to.
        private static let blockSize = 64

        init(_ key: [UInt8]) {
            states = .allocate(capacity: 2)
            states.initialize(repeating: SHA256_CTX(), count: 2)
            // The key, or its digest when it is longer than a block (RFC 2104, section 2), padded to a
            // block; the scratch is wiped before it is freed, as the states are in `deinit`.
            withUnsafeTemporaryAllocation(of: UInt8.self, capacity: Self.blockSize) { padded in
                padded.initialize(repeating: 0)
                defer { OPENSSL_cleanse(padded.baseAddress, padded.count) }
                key.withUnsafeBytes { bytes in
                    if bytes.count > Self.blockSize {
                        var context = SHA256_CTX()
                        ccordis_sha256_init(&context)
                        ccordis_sha256_update(&context, bytes.baseAddress, bytes.count)
                        ccordis_sha256_final(padded.baseAddress, &context)
                        OPENSSL_cleanse(&context, MemoryLayout<SHA256_CTX>.size)
                    } else if let base = bytes.baseAddress {
                        UnsafeMutableRawBufferPointer(padded).copyMemory(from: UnsafeRawBufferPointer(start: base, count: bytes.count))
                    }
                }
                for (index, pad) in [UInt8(0x36), UInt8(0x5c)].enumerated() {
                    for offset in padded.indices { padded[offset] ^= pad }
                    ccordis_sha256_init(states + index)
                    ccordis_sha256_update(states + index, padded.baseAddress, padded.count)
                    for offset in padded.indices { padded[offset] ^= pad }
                }
            }
        }

        deinit {
            OPENSSL_cleanse(states, 2 * MemoryLayout<SHA256_CTX>.size)
            states.deallocate()
        }

        /// The data of one MAC, fed in pieces.
        struct Input {
            fileprivate var context: SHA256_CTX

            /// Adds `bytes` to the data.
            mutating func add(_ bytes: UnsafeRawBufferPointer) {
                guard !bytes.isEmpty else { return }
                ccordis_sha256_update(&context, bytes.baseAddress, bytes.count)
            }
        }

        /// Writes the MAC of the data `feed` adds to `out` (its first 32 bytes).
        ///
        /// - Throws: `.crypto` when `out` is shorter than a MAC (nothing is written then).
        func mac(into out: UnsafeMutableRawBufferPointer, _ feed: (inout Input) -> Void) throws(WireError) {
            guard out.count >= HMACSHA256.size, let digest = out.baseAddress?.assumingMemoryBound(to: UInt8.self) else {
                throw WireError(.crypto, "a buffer of \(out.count) bytes cannot hold an HMAC-SHA256")
            }
            var input = Input(context: states[0])
            feed(&input)
            ccordis_sha256_final(digest, &input.context)
            var outer = states[1]
            ccordis_sha256_update(&outer, digest, HMACSHA256.size)
            ccordis_sha256_final(digest, &outer)
        }

        /// Writes the MAC of `data` to `out` (its first 32 bytes).
        func mac(_ data: UnsafeRawBufferPointer, into out: UnsafeMutableRawBufferPointer) throws(WireError) {
            try mac(into: out) { $0.add(data) }
        }
    }
}
