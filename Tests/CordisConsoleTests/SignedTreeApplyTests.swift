import CordisControl
import CordisJSON
import CordisProcessTesting
import CordisWire
import Foundation
import Testing

/// Signed plugin trees with a real node: `cordis-console sign` and `apply`, a tree signed with the
/// `openssl` command line alone, and one refusal per rule, each leaving the entries file byte for byte
/// as it was.
@Suite("Signed trees applied to a real node", .serialized)
struct SignedTreeApplyTests {
    static let entries = #"{"version":1,"entries":[{"id":"clock","plugin":"clock"}]}"#
    static let tree = #"{"version":1,"entries":[{"id":"clock","plugin":"clock"},{"id":"count","plugin":"counter","config":{"start":5}}]}"#

    /// Signs the payload file `payload` with `key` using nothing but the openssl command line (and
    /// coreutils), writing the envelope to `out` — the recipe of docs/security.md.
    static let opensslSign = #"""
        key=$1; payload=$2; out=$3
        keyid=$(openssl pkey -in "$key" -pubout -outform DER | tail -c 32 | openssl dgst -sha256 -binary | head -c 8 | od -An -tx1 | tr -d ' \n')
        sig=$(openssl pkeyutl -sign -inkey "$key" -rawin -in "$payload" | basenc --base64url -w0 | tr -d '=')
        body=$(basenc --base64url -w0 < "$payload" | tr -d '=')
        printf '{"keyId":"%s","payload":"%s","signature":"%s"}\n' "$keyid" "$body" "$sig" > "$out"
        """#

    struct Setup {
        let cluster: Cluster
        var node: NodeProcess
        var key: String { cluster.folder.path("admin.pem") }
        var otherKey: String { cluster.folder.path("other.pem") }
        func path(_ name: String) -> String { cluster.folder.path(name) }
        func entriesBytes() throws -> Data { try Data(contentsOf: URL(fileURLWithPath: cluster.entries("a"))) }
    }

    static func setUp(_ cluster: Cluster) async throws -> Setup {
        let folder = cluster.folder
        for name in ["admin", "other"] {
            #expect(await runShell("openssl genpkey -algorithm ed25519 -out \(folder.path("\(name).pem")) 2>/dev/null") == 0)
        }
        #expect(await runShell("openssl pkey -in \(folder.path("admin.pem")) -pubout -out \(folder.path("trusted.pem"))") == 0)
        try folder.write("sign.sh", opensslSign)
        try folder.write("tree.json", tree)
        let node = try await cluster.start("a", entries: entries, extra: ["--trusted-keys", folder.path("trusted.pem")])
        return Setup(cluster: cluster, node: node)
    }

    /// Writes an envelope signed by the openssl command line for a payload given as JSON text.
    static func opensslEnvelope(_ setup: Setup, _ name: String, payload: String, key: String? = nil) async throws -> String {
        try setup.cluster.folder.write("\(name).payload", payload)
        let out = setup.path("\(name).signed.json")
        #expect(await runShell("sh \(setup.path("sign.sh")) \(key ?? setup.key) \(setup.path("\(name).payload")) \(out)") == 0)
        return out
    }

    static func payload(node: String = "a", version: Int64, issued: Date = Date(), expires: Date = Date() + 3600,
                        entries: String = #"[{"id":"count","plugin":"counter"}]"#) -> String {
        func time(_ date: Date) -> String {
            let formatter = ISO8601DateFormatter()
            formatter.timeZone = TimeZone(identifier: "UTC")
            return formatter.string(from: date)
        }
        return #"{"node":"\#(node)","version":\#(version),"issuedAt":"\#(time(issued))","expiresAt":"\#(time(expires))","entries":\#(entries)}"#
    }

    /// Applies `file` and checks it is refused by `rule` and leaves the entries file unchanged.
    static func expectRefused(_ setup: Setup, _ file: String, rule: String, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let before = try setup.entriesBytes()
        let result = try await setup.cluster.console("a", ["apply", file])
        #expect(result.code == 1, "\(result.out) \(result.err)", sourceLocation: sourceLocation)
        #expect(result.err.contains("signed tree refused (\(rule)): "), "\(result.err)", sourceLocation: sourceLocation)
        #expect(try setup.entriesBytes() == before, "the entries file changed", sourceLocation: sourceLocation)
    }

    @Test("cordis-console sign and apply: the tree runs, the entries file holds it, the version is kept beside it")
    func signAndApply() async throws {
        let cluster = try Cluster()
        defer { Task { await cluster.stop() } }
        let setup = try await Self.setUp(cluster)
        let signed = try await runConsole(["sign", "--key", setup.key, "--node", "a", "--version", "7", "--expires", "1h", setup.path("tree.json")])
        #expect(signed.code == 0, "\(signed.err)")
        try cluster.folder.write("tree.signed.json", signed.out)
        let envelope = try JSONParser().parse(Array(signed.out.utf8))
        #expect(envelope["keyId"]?.stringValue?.count == 16)
        let applied = try await cluster.console("a", ["apply", setup.path("tree.signed.json")])
        #expect(applied.code == 0, "\(applied.err)")
        #expect(applied.out == "a: applied signed tree version 7 (2 entries)\n")
        let file = String(decoding: try setup.entriesBytes(), as: UTF8.self)
        #expect(file.contains("\"count\""))
        let kept = try String(contentsOfFile: cluster.entries("a") + ".signed-version", encoding: .utf8)
        #expect(kept.contains("\"version\":7"))
        #expect(await setup.node.waitForLine(containing: "apply signed tree version 7"))
        // Replayed: the same document again.
        try await Self.expectRefused(setup, setup.path("tree.signed.json"), rule: "freshness")
    }

    @Test("a tree signed with the openssl command line alone is accepted")
    func opensslSignedTreeIsAccepted() async throws {
        let cluster = try Cluster()
        defer { Task { await cluster.stop() } }
        let setup = try await Self.setUp(cluster)
        let file = try await Self.opensslEnvelope(setup, "cli", payload: Self.payload(version: 3))
        let applied = try await cluster.console("a", ["apply", file])
        #expect(applied.code == 0, "\(applied.err)")
        #expect(String(decoding: try setup.entriesBytes(), as: UTF8.self).contains("\"count\""))
        #expect(!String(decoding: try setup.entriesBytes(), as: UTF8.self).contains("\"clock\""))
    }

    @Test("each rule refuses with its name and leaves the entries file byte for byte unchanged")
    func everyRuleRefuses() async throws {
        let cluster = try Cluster()
        defer { Task { await cluster.stop() } }
        let setup = try await Self.setUp(cluster)
        let now = Date()
        try await Self.expectRefused(setup, try await Self.opensslEnvelope(setup, "wrongkey", payload: Self.payload(version: 10), key: setup.otherKey), rule: "signature")
        let good = try await Self.opensslEnvelope(setup, "tampered", payload: Self.payload(version: 10))
        var text = try String(contentsOfFile: good, encoding: .utf8)
        let start = try #require(text.range(of: "\"payload\":\"")).upperBound
        let index = text.index(start, offsetBy: 20)
        text.replaceSubrange(index...index, with: text[index] == "A" ? "B" : "A")
        try text.write(toFile: good, atomically: true, encoding: .utf8)
        try await Self.expectRefused(setup, good, rule: "signature")
        // A tree for b sent to a (the console would send it to b): straight through the control API.
        let other = try await Self.opensslEnvelope(setup, "other", payload: Self.payload(node: "b", version: 10))
        let envelope = try JSONParser().parse(Array(try Data(contentsOf: URL(fileURLWithPath: other))))
        let before = try setup.entriesBytes()
        let client = try await ControlClient.connect(to: try Address(parsing: cluster.address("a")))
        do {
            _ = try await client.request(.apply, args: ["envelope": envelope], timeout: .seconds(5))
            Issue.record("a tree for b was applied on a")
        } catch let failure as ControlFailure {
            #expect(failure.message.hasPrefix("signed tree refused (node): "), "\(failure.message)")
        }
        await client.close()
        #expect(try setup.entriesBytes() == before)
        try await Self.expectRefused(
            setup, try await Self.opensslEnvelope(setup, "expired", payload: Self.payload(version: 10, issued: now - 7200, expires: now - 600)),
            rule: "window")
        try await Self.expectRefused(
            setup, try await Self.opensslEnvelope(setup, "future", payload: Self.payload(version: 10, issued: now + 900, expires: now + 7200)),
            rule: "window")
        let big = #"[{"id":"count","plugin":"counter","config":{"pad":""# + String(repeating: "x", count: 300 * 1024) + #""}}]"#
        try await Self.expectRefused(setup, try await Self.opensslEnvelope(setup, "big", payload: Self.payload(version: 10, entries: big)), rule: "size")
        try await Self.expectRefused(
            setup, try await Self.opensslEnvelope(setup, "invalid", payload: Self.payload(version: 10, entries: #"[{"id":"x","plugin":"nope"}]"#)),
            rule: "content")
        try await Self.expectRefused(
            setup, try await Self.opensslEnvelope(setup, "badconfig", payload: Self.payload(version: 10, entries: #"[{"id":"c","plugin":"counter","config":{"start":"x"}}]"#)),
            rule: "content")
        try cluster.folder.write("shape.json", #"{"keyId": "x", "payload": 3}"#)
        try await Self.expectRefused(setup, setup.path("shape.json"), rule: "shape")
    }

    @Test("a version later than the signing clock allows (2^53 − 1) is refused and used up nothing, one past what a JSON number carries exactly (Int64.max) is refused as a bad shape: a tree signed now still applies; sign --version refuses it too")
    func versionFromTheFarFutureIsRefused() async throws {
        let cluster = try Cluster()
        defer { Task { await cluster.stop() } }
        let setup = try await Self.setUp(cluster)
        let huge = try await Self.opensslEnvelope(setup, "huge", payload: Self.payload(version: 9_007_199_254_740_991))
        try await Self.expectRefused(setup, huge, rule: "freshness")
        let inexact = try await Self.opensslEnvelope(setup, "inexact", payload: Self.payload(version: Int64.max))
        try await Self.expectRefused(setup, inexact, rule: "shape")
        #expect(!FileManager.default.fileExists(atPath: cluster.entries("a") + ".signed-version"))
        let signed = try await runConsole(["sign", "--key", setup.key, "--node", "a", "--expires", "1h", setup.path("tree.json")])
        #expect(signed.code == 0, "\(signed.err)")
        try cluster.folder.write("now.signed.json", signed.out)
        let applied = try await cluster.console("a", ["apply", setup.path("now.signed.json")])
        #expect(applied.code == 0, "\(applied.err)")
        let refused = try await runConsole([
            "sign", "--key", setup.key, "--node", "a", "--version", "\(Int64.max)", "--expires", "1h", setup.path("tree.json"),
        ])
        #expect(refused.code == 64, "\(refused.out)")
        #expect(refused.err.contains("later than now"), "\(refused.err)")
    }

    @Test("an older version is refused after a restart: the last applied version is kept durably")
    func olderVersionAfterRestart() async throws {
        let cluster = try Cluster()
        defer { Task { await cluster.stop() } }
        var setup = try await Self.setUp(cluster)
        let newer = try await Self.opensslEnvelope(setup, "v20", payload: Self.payload(version: 20))
        let older = try await Self.opensslEnvelope(setup, "v19", payload: Self.payload(version: 19))
        #expect(try await cluster.console("a", ["apply", newer]).code == 0)
        await setup.node.stop()
        let kept = String(decoding: try setup.entriesBytes(), as: UTF8.self)
        setup.node = try await cluster.start("a", entries: kept, extra: ["--trusted-keys", setup.path("trusted.pem")])
        try await Self.expectRefused(setup, older, rule: "freshness")
    }

    @Test("--require-signed-trees refuses unsigned changes and SIGHUP reloads, and still applies a signed tree")
    func requireSignedTrees() async throws {
        let cluster = try Cluster()
        defer { Task { await cluster.stop() } }
        let folder = cluster.folder
        #expect(await runShell("openssl genpkey -algorithm ed25519 -out \(folder.path("admin.pem")) 2>/dev/null") == 0)
        #expect(await runShell("openssl pkey -in \(folder.path("admin.pem")) -pubout -out \(folder.path("trusted.pem"))") == 0)
        try folder.write("sign.sh", Self.opensslSign)
        let node = try await cluster.start(
            "a", entries: Self.entries, extra: ["--trusted-keys", folder.path("trusted.pem"), "--require-signed-trees"])
        let setup = Setup(cluster: cluster, node: node)
        let before = try setup.entriesBytes()
        let refused = try await cluster.console("a", ["disable", "a:clock"])
        #expect(refused.code == 1)
        #expect(refused.err.contains("accepts only signed trees"), "\(refused.err)")
        #expect(try setup.entriesBytes() == before)
        try folder.write("a.json", #"{"version":1,"entries":[]}"#)
        node.signal(SIGHUP)
        #expect(await node.waitForLine(containing: "reload of the entries file refused"))
        let status = try await cluster.console("a", ["status", "--json"])
        #expect(status.out.contains("\"clock\""))
        let signed = try await Self.opensslEnvelope(setup, "ok", payload: Self.payload(version: 1))
        let applied = try await cluster.console("a", ["apply", signed])
        #expect(applied.code == 0, "\(applied.err)")
    }
}
