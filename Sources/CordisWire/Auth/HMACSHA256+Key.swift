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
    /// states are 224 bytes).
    final class Key: Sendable {
        /// The SHA-256 state after the key XOR ipad block, and after the key XOR opad block.
        private let inner: Context
        private let outer: Context

        /// A SHA-256 state. `@unchecked Sendable`: a C struct of integers, copied by value, never shared.
        fileprivate struct Context: @unchecked Sendable {
            var state = SHA256_CTX()
        }

        /// The SHA-256 input block size, which the key is padded (or first hashed) to.
        private static let blockSize = 64

        init(_ key: [UInt8]) {
            // A key longer than a block is replaced by its digest (RFC 2104, section 2).
            var material = key
            if material.count > Self.blockSize {
                var context = Context()
                ccordis_sha256_init(&context.state)
                material.withUnsafeBytes { _ = ccordis_sha256_update(&context.state, $0.baseAddress, $0.count) }
                material = [UInt8](repeating: 0, count: HMACSHA256.size)
                material.withUnsafeMutableBytes { _ = ccordis_sha256_final($0.baseAddress?.assumingMemoryBound(to: UInt8.self), &context.state) }
            }
            func padded(_ pad: UInt8) -> Context {
                var block = [UInt8](repeating: pad, count: Self.blockSize)
                for (index, byte) in material.enumerated() { block[index] ^= byte }
                var context = Context()
                ccordis_sha256_init(&context.state)
                block.withUnsafeBytes { _ = ccordis_sha256_update(&context.state, $0.baseAddress, $0.count) }
                return context
            }
            inner = padded(0x36)
            outer = padded(0x5c)
        }

        /// The data of one MAC, fed in pieces.
        struct Input {
            fileprivate var context: Context

            /// Adds `bytes` to the data.
            mutating func add(_ bytes: UnsafeRawBufferPointer) {
                guard !bytes.isEmpty else { return }
                _ = ccordis_sha256_update(&context.state, bytes.baseAddress, bytes.count)
            }
        }

        /// Writes the MAC of the data `feed` adds to `out` (its first 32 bytes).
        ///
        /// - Throws: `.crypto` when `out` is shorter than a MAC (nothing is written then).
        func mac(into out: UnsafeMutableRawBufferPointer, _ feed: (inout Input) -> Void) throws(WireError) {
            guard out.count >= HMACSHA256.size, let digest = out.baseAddress?.assumingMemoryBound(to: UInt8.self) else {
                throw WireError(.crypto, "a buffer of \(out.count) bytes cannot hold an HMAC-SHA256")
            }
            var input = Input(context: inner)
            feed(&input)
            var context = input.context
            ccordis_sha256_final(digest, &context.state)
            context = outer
            ccordis_sha256_update(&context.state, digest, HMACSHA256.size)
            ccordis_sha256_final(digest, &context.state)
        }

        /// Writes the MAC of `data` to `out` (its first 32 bytes).
        func mac(_ data: UnsafeRawBufferPointer, into out: UnsafeMutableRawBufferPointer) throws(WireError) {
            try mac(into: out) { $0.add(data) }
        }
    }
}
