import CordisControl
import CordisJSON
import CordisNode
import CordisProcessTesting
import CordisWire
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Real `cordis-node` processes on TCP with TLS (certificates from `deploy/make-certs.sh`): two TLS
/// nodes link and share a service, a call's argument never crosses the wire in clear (a relay records
/// the bytes; with `--insecure` it does, as a control), peers with a wrong certificate or none are
/// refused and learn nothing, a TLS node and an HMAC node refuse each other saying which one lacks TLS,
/// a stalled TLS handshake is cut, bad bytes inside a session close that link only, an operator's
/// certificate names its role, and two CAs are trusted during a rotation.
@Suite("Cluster: TCP with TLS", .serialized)
struct ClusterTLSTests {
    /// A number no TLS record will hold by chance, as a call's argument.
    static let marker = 734_912_583_621

    static func arguments(_ name: String, in folder: TestFolder, tls: [String], peers: [String] = [], extra: [String] = []) -> [String] {
        ["--name", name, "--entries", folder.path("\(name).json"), "--listen", "tcp:127.0.0.1:0",
         "--listen", "unix:\(folder.path("\(name).sock"))"]
            + tls + peers.flatMap { ["--peer", $0] } + ClusterMember.timing + extra
    }

    /// A node that dials `peer` and that nobody can dial back: it listens on its Unix socket only (for
    /// the test's console) and advertises a TCP port nobody listens on, so every link to it is its own,
    /// through the relay it dials.
    static func dialOnly(_ name: String, in folder: TestFolder, tls: [String], peer: String) -> [String] {
        ["--name", name, "--entries", folder.path("\(name).json"), "--listen", "unix:\(folder.path("\(name).sock"))",
         "--advertise", "tcp:127.0.0.1:\(TCPRelay.unusedPort())", "--peer", peer] + tls + ClusterMember.timing
    }

    /// The `tcp:127.0.0.1:PORT` address a member printed (it prints its Unix listener too).
    static func tcpAddress(of member: ClusterMember) async throws -> String {
        try #require(await member.waitForLine(containing: "listening on tcp:"))
        return try ClusterTCPTests.listeningAddress(of: member)
    }

    static func port(of member: ClusterMember) async throws -> UInt16 {
        let address = try await Self.tcpAddress(of: member)
        return try #require(address.split(separator: ":").last.flatMap { UInt16($0) })
    }

    /// A console on the member's Unix socket (peer credentials, no TLS).
    static func local(_ member: ClusterMember) async throws -> ControlClient {
        try await ControlClient.connect(to: Address(parsing: member.address), name: "test-console")
    }

    /// Calls `counter.add(marker)` from a console on `a`; the counter runs on the other node.
    static func callAcross(_ console: ControlClient) async throws -> Int? {
        try await console.request(
            .call, args: ["service": "counter", "method": "add", "args": .object(["_0": .integer(marker)])]
        ).intValue
    }

    /// B serves a counter and listens on TCP; A dials B through a relay (which B advertises, so every
    /// link between them crosses it); a console on A calls the counter. Returns what the relay saw, and
    /// the lines of both nodes' output about links (to tell why, when the relay saw more than one).
    static func callThroughRelay(
        tls: (String) -> [String], extra: [String] = []
    ) async throws -> (result: Int?, relay: [UInt8], sawMarker: Bool, connections: Int, linkLines: String) {
        var outcome: (Int?, [UInt8], Bool, Int, String) = (nil, [], false, 0, "")
        try await TestCluster.run { cluster in
            let folder = cluster.folder
            try folder.write("b.json", #"[{"id": "counter", "plugin": "counter"}]"#)
            try folder.write("a.json", "[]")
            // B listens on a free port below the kernel's ephemeral range (one learnt from a port-0 listener
            // and reused after a restart could meanwhile be another connection's source port) and
            // advertises the relay in front of it.
            let bPort = try LoopbackPorts.free(1)[0]
            let fixed = Self.arguments("b", in: folder, tls: tls("b"), extra: extra)
                .map { $0 == "tcp:127.0.0.1:0" ? "tcp:127.0.0.1:\(bPort)" : $0 }
            let relay = try TCPRelay(targetPort: bPort)
            defer { relay.stop() }
            let b = try await cluster.launch("b", arguments: fixed + ["--advertise", relay.address])
            let a = try await cluster.launch("a", arguments: Self.dialOnly("a", in: folder, tls: tls("a") + extra, peer: relay.address))
            try #require(await a.waitForLine(containing: "linked to b"))
            try #require(await b.waitForLine(containing: "linked to a"))
            let onB = try await Self.local(b)
            try #require(try await onB.awaitFiber(ofEntry: "counter", inState: "active") != nil)
            await onB.close()
            let console = try await Self.local(a)
            let result = try await Self.awaitCall(console)
            await console.close()
            let linkLines = [("a", a.process.text), ("b", b.process.text)].flatMap { name, text in
                text.split(separator: "\n").filter { line in
                    ["link", "dial", "handshake", "heartbeat", "refused"].contains { line.contains($0) }
                }
                    .map { "\(name): \($0)" }
            }
            outcome = (
                result, relay.recorded, relay.recorded(contains: String(Self.marker)), relay.connections,
                linkLines.joined(separator: "\n"))
        }
        return outcome
    }

    /// Calls the counter from `console` until the proxy of the remote provider answers, each call
    /// awaiting the previous answer (no sleeping), within a deadline; nil when it never answered. (The
    /// request bound is the status waits' backstop, which the deadline reaches first.)
    static func awaitCall(_ console: ControlClient, timeout: Duration = .seconds(20)) async throws -> Int? {
        let deadline = ContinuousClock.now + timeout
        var requests = 0
        while requests < ControlClient.maxPollRequests, ContinuousClock.now < deadline {
            requests += 1
            if let result = try? await Self.callAcross(console) { return result }
        }
        return nil
    }

    @Test("two TLS nodes link and a call crosses them; its argument never appears in clear in the relayed TCP bytes, but does with --insecure")
    func callIsEncrypted() async throws {
        let folder = try TestFolder()
        defer { folder.remove() }
        let certificates = try await TLSTestCertificates(in: folder)
        let tls = try await Self.callThroughRelay(tls: { certificates.flags("node-\($0)") })
        #expect(tls.result == Self.marker)
        #expect(tls.relay.count > 1000, "the relay saw \(tls.relay.count) bytes")
        #expect(!tls.sawMarker, "the call's argument crossed the relay in clear")
        // The first bytes each way are TLS records (a ClientHello from A).
        #expect(tls.relay.first == 0x16)
        #expect(tls.connections == 1, "every link between the nodes crosses the relay; the nodes said:\n\(tls.linkLines)")

        let plain = try await Self.callThroughRelay(tls: { _ in ["--insecure"] })
        #expect(plain.result == Self.marker)
        #expect(plain.sawMarker, "control: with --insecure the argument is visible on the wire")
        #expect(plain.connections == 1, "the nodes said:\n\(plain.linkLines)")
    }
}
