import CordisJSON
import CordisSigning
import Foundation
import Testing

/// Signed trees in process: keys from PEM, the key id, the envelope, and each verification rule.
@Suite("Signed trees")
struct SignedTreeTests {
    /// A fixed Ed25519 key (RFC 8032 test 1's secret, as `openssl genpkey -algorithm ed25519` writes it).
    static let privatePEM = """
        -----BEGIN PRIVATE KEY-----
        MC4CAQAwBQYDK2VwBCIEIJ1hsZ3v/VpguoRK9JLsLMREScVpezJpGXA7rAMcrn9g
        -----END PRIVATE KEY-----
        """
    static let publicPEM = """
        -----BEGIN PUBLIC KEY-----
        MCowBQYDK2VwAyEA11qYAYKxCrfVS/7TyWQHOg7hcvPapiMlrwIaaPcHURo=
        -----END PUBLIC KEY-----
        """

    static func key() throws -> Ed25519PrivateKey { try Ed25519PrivateKey(pem: Array(privatePEM.utf8)) }
    static func trusted() throws -> TrustedKeys { TrustedKeys(try Ed25519PublicKey.all(inPEM: Array(publicPEM.utf8))) }
    static let now = 1_764_586_800.0  // 2025-12-01T11:00:00Z

    static func payload(node: String = "a", version: Int64 = 5, issued: Double = now, expires: Double = now + 3600) -> SignedTreePayload {
        SignedTreePayload(node: node, version: version, issuedAt: issued, expiresAt: expires, entries: [["id": "clock", "plugin": "clock"]])
    }

    @Test("the key id is the hex of the first 8 bytes of SHA-256 over the raw public key (RFC 8032 test 1)")
    func keyIdentity() throws {
        let key = try Self.key()
        #expect(key.publicKey.raw.prefix(4) == [0xd7, 0x5a, 0x98, 0x01])
        #expect(key.publicKey == (try Self.trusted()).keys.values.first)
        // sha256(d75a9801…511a) starts with these bytes (checked with `openssl dgst -sha256`).
        #expect(key.publicKey.keyID.count == 16)
        #expect(key.publicKey.keyID == "21fe31dfa154a261")
    }

    @Test("the signature of RFC 8032 test 1 (empty message) is reproduced and verifies")
    func rfc8032() throws {
        let signature = try Self.key().sign([])
        #expect(signature.prefix(4) == [0xe5, 0x56, 0x43, 0x00])
        #expect(try Self.key().publicKey.verifies(signature, of: []))
        var bad = signature
        bad[0] ^= 1
        #expect(!(try Self.key().publicKey.verifies(bad, of: [])))
    }

    @Test("base64url round-trips every length and refuses other alphabets")
    func base64url() {
        for length in 0..<70 {
            let bytes = (0..<length).map { UInt8(truncatingIfNeeded: $0 * 37 + 11) }
            let text = Base64URL.encode(bytes)
            #expect(!text.contains("=") && !text.contains("+") && !text.contains("/"))
            #expect(Base64URL.decode(text) == bytes)
        }
        #expect(Base64URL.decode("a+b/") == nil)
        #expect(Base64URL.decode("a") == nil)
        #expect(Base64URL.decode("YQ==") == [0x61])
    }

    @Test("RFC 3339 UTC times parse and format; offsets and nonsense are refused")
    func times() {
        #expect(RFC3339.parse("2025-12-01T11:00:00Z") == Self.now)
        #expect(RFC3339.parse("2025-12-01T11:00:00.5Z") == Self.now + 0.5)
        #expect(RFC3339.format(Int64(Self.now)) == "2025-12-01T11:00:00Z")
        #expect(RFC3339.parse("2025-12-01T11:00:00+01:00") == nil)
        #expect(RFC3339.parse("2025-13-01T11:00:00Z") == nil)
        #expect(RFC3339.parse("yesterday") == nil)
    }

    @Test("a signed tree verifies; each rule refuses with its name")
    func rules() throws {
        let key = try Self.key()
        let trusted = try Self.trusted()
        let good = try SignedTree(signing: Self.payload(), with: key)
        let parsed = try SignedTree(json: good.json).verify(trusted: trusted, node: "a", now: Self.now, lastVersion: 4)
        #expect(parsed.version == 5 && parsed.node == "a")

        func rule(_ body: () throws -> Void) -> SignedTreeError.Rule? {
            do {
                try body()
                return nil
            } catch let error as SignedTreeError {
                #expect(error.description.hasPrefix("signed tree refused (\(error.rule.rawValue)): "))
                return error.rule
            } catch {
                return nil
            }
        }
        #expect(rule { _ = try SignedTree(json: ["keyId": "x", "payload": 3, "signature": ""]) } == .shape)
        var tampered = good
        tampered.payload[tampered.payload.count / 2] ^= 0x01
        #expect(rule { _ = try tampered.verify(trusted: trusted, node: "a", now: Self.now, lastVersion: 0) } == .signature)
        #expect(rule { _ = try good.verify(trusted: TrustedKeys([]), node: "a", now: Self.now, lastVersion: 0) } == .signature)
        #expect(rule { _ = try good.verify(trusted: trusted, node: "b", now: Self.now, lastVersion: 0) } == .node)
        #expect(rule { _ = try good.verify(trusted: trusted, node: "a", now: Self.now + 3600 + 301, lastVersion: 0) } == .window)
        #expect(rule { _ = try good.verify(trusted: trusted, node: "a", now: Self.now - 301, lastVersion: 0) } == .window)
        // Within the 5 minutes of skew: accepted.
        #expect(rule { _ = try good.verify(trusted: trusted, node: "a", now: Self.now - 299, lastVersion: 0) } == nil)
        #expect(rule { _ = try good.verify(trusted: trusted, node: "a", now: Self.now, lastVersion: 5) } == .freshness)
        let big = SignedTreePayload(
            node: "a", version: 9, issuedAt: Self.now, expiresAt: Self.now + 60,
            entries: [.string(String(repeating: "x", count: SignedTree.maximumPayloadBytes))])
        let oversized = try SignedTree(signing: big, with: key)
        #expect(rule { _ = try oversized.verify(trusted: trusted, node: "a", now: Self.now, lastVersion: 0) } == .size)
    }
}
