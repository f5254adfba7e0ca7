@testable import CordisWire
import Testing

/// The handshake's nonces come from the kernel's generator (`getrandom(2)`), not from libcrypto.
@Suite("Random bytes for nonces")
struct RandomBytesTests {
    @Test("Every size asked for is filled, from none to more than one getrandom call returns at once")
    func sizes() throws {
        for count in [0, 1, 32, 4_096, 40 * 1024 * 1024] {
            #expect(try HMACSHA256.randomBytes(count).count == count)
        }
    }

    @Test("Nonces differ from each other and are not all one byte")
    func distinct() throws {
        let nonces = try (0..<64).map { _ in try HMACSHA256.randomBytes(Handshake.nonceSize) }
        #expect(Set(nonces).count == nonces.count)
        #expect(nonces.allSatisfy { Set($0).count > 1 })
        // 1 MiB of output uses every byte value (a generator stuck on part of the range would not).
        #expect(Set(try HMACSHA256.randomBytes(1 << 20)).count == 256)
    }
}
