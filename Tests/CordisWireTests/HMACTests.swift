@testable import CordisWire
import Testing

/// HMAC-SHA256 (`HMACSHA256.Key`, on libcrypto's low-level SHA-256) against the test vectors of
/// RFC 4231, and a MAC fed in pieces against the same MAC fed whole.
@Suite("HMAC-SHA256")
struct HMACTests {
    struct Vector: Sendable, CustomTestStringConvertible {
        let name: String
        let key: [UInt8]
        let data: [UInt8]
        let mac: String
        var testDescription: String { name }
    }

    /// RFC 4231, section 4: test cases 1, 2, 3, 4, 6 and 7 (case 5 truncates the output), HMAC-SHA-256.
    /// Cases 6 and 7 have a 131-byte key, longer than a block, which is hashed first.
    static let vectors: [Vector] = [
        Vector(
            name: "case 1", key: [UInt8](repeating: 0x0b, count: 20), data: Array("Hi There".utf8),
            mac: "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"),
        Vector(
            name: "case 2", key: Array("Jefe".utf8), data: Array("what do ya want for nothing?".utf8),
            mac: "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"),
        Vector(
            name: "case 3", key: [UInt8](repeating: 0xaa, count: 20), data: [UInt8](repeating: 0xdd, count: 50),
            mac: "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe"),
        Vector(
            name: "case 4", key: (1...25).map { UInt8($0) }, data: [UInt8](repeating: 0xcd, count: 50),
            mac: "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b"),
        Vector(
            name: "case 6", key: [UInt8](repeating: 0xaa, count: 131),
            data: Array("Test Using Larger Than Block-Size Key - Hash Key First".utf8),
            mac: "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"),
        Vector(
            name: "case 7", key: [UInt8](repeating: 0xaa, count: 131),
            data: Array(("This is a test using a larger than block-size key and a larger than block-size data. "
                + "The key needs to be hashed before being used by the HMAC algorithm.").utf8),
            mac: "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2"),
    ]

    @Test("RFC 4231's vectors", arguments: vectors)
    func rfc4231(_ vector: Vector) throws {
        #expect(Hex.string(try HMACSHA256.mac(key: vector.key, data: vector.data)) == vector.mac)
    }

    @Test("A key exactly one block long is used as it is, and an empty key is all padding")
    func blockSizedAndEmptyKeys() throws {
        // Computed with Python's hmac module: hmac.new(bytes(range(64)), b"cordis", "sha256") and
        // hmac.new(b"", b"", "sha256").
        #expect(Hex.string(try HMACSHA256.mac(key: (0..<64).map { UInt8($0) }, data: Array("cordis".utf8)))
            == "0c27dbd943d40c187d099371819c9c6a584467077ea8e10ad034c2a1d4ff7acb")
        #expect(Hex.string(try HMACSHA256.mac(key: [], data: []))
            == "b613679a0814d9ec772f95d778c35fc5ff1697c493715653c6c712144292c5ad")
    }

    @Test("A MAC fed in pieces, empty ones included, equals the MAC of the pieces joined")
    func pieces() throws {
        let key = HMACSHA256.Key(Array("frame key".utf8))
        let data = (0..<300).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        let whole = try mac(key) { input in data.withUnsafeBytes { input.add($0) } }
        for cuts in [[0, 0], [1, 299], [64, 128], [63, 65], [150, 150], [0, 300]] {
            let pieced = try mac(key) { input in
                data.withUnsafeBytes { bytes in
                    input.add(UnsafeRawBufferPointer(rebasing: bytes[..<cuts[0]]))
                    input.add(UnsafeRawBufferPointer(rebasing: bytes[cuts[0] ..< cuts[1]]))
                    input.add(UnsafeRawBufferPointer(rebasing: bytes[cuts[1]...]))
                }
            }
            #expect(pieced == whole, "cut at \(cuts)")
        }
        // The key is not changed by use: the same data gives the same MAC again.
        #expect(try mac(key) { input in data.withUnsafeBytes { input.add($0) } } == whole)
    }

    @Test("A buffer shorter than a MAC is refused and left as it was")
    func shortBuffer() {
        let key = HMACSHA256.Key([1, 2, 3])
        var out = [UInt8](repeating: 9, count: 31)
        #expect(throws: WireError.self) {
            try out.withUnsafeMutableBytes { bytes in try key.mac(UnsafeRawBufferPointer(start: nil, count: 0), into: bytes) }
        }
        #expect(out == [UInt8](repeating: 9, count: 31))
    }

    private func mac(_ key: HMACSHA256.Key, _ feed: (inout HMACSHA256.Key.Input) -> Void) throws -> [UInt8] {
        var out = [UInt8](repeating: 0, count: HMACSHA256.size)
        try out.withUnsafeMutableBytes { bytes in try key.mac(into: bytes, feed) }
        return out
    }
}
