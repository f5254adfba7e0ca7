import CordisControl
import CordisNode
import CordisProcessTesting
import CordisWire
import Foundation
import Testing

/// Names a certificate may not take: an operator certificate named `cluster` (the operators file's name for
/// holders of the cluster secret) gets no role from that entry, `make-certs.sh` will not issue one, and the
/// CA it makes cannot sign further CAs (`pathlen:0`).
@Suite("Cluster: reserved operator names and CA path length", .serialized)
struct OperatorCertificateNameTests {
    typealias Base = ClusterTLSTests

    /// Mints a leaf certificate with `san` signed by `signer` (a path without .key/.pem) with openssl,
    /// as anyone holding that CA's key could, whatever make-certs.sh allows; `ca` makes it a CA.
    static func mint(_ base: String, san: String, signer: String, ca: Bool = false) async throws {
        let extensions = ca
            ? "basicConstraints=critical,CA:TRUE\nkeyUsage=critical,keyCertSign,cRLSign\n"
            : "basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=serverAuth,clientAuth\nsubjectAltName=\(san)\n"
        try extensions.write(toFile: base + ".ext", atomically: true, encoding: .utf8)
        for command in [
            ["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", base + ".key"],
            ["req", "-new", "-key", base + ".key", "-subj", "/CN=minted", "-out", base + ".csr"],
            ["x509", "-req", "-in", base + ".csr", "-CA", signer + ".pem", "-CAkey", signer + ".key", "-CAcreateserial",
             "-days", "30", "-sha256", "-extfile", base + ".ext", "-out", base + ".pem"],
        ] {
            let (ended, output) = try await ChildProcess.run(URL(fileURLWithPath: "/usr/bin/openssl"), command, deadline: .seconds(30))
            try #require(ended?.status == 0, "openssl \(command.first ?? ""): \(output)")
        }
    }

    @Test("an operator certificate named cluster does not get the role the operators file gives to the cluster secret")
    func certificateNamedClusterGetsNoSecretRole() async throws {
        try await TestCluster.run { cluster in
            let folder = cluster.folder
            let certificates = try await TLSTestCertificates(in: folder)
            try await Self.mint(certificates.folder + "/operator-cluster", san: "URI:cordis://operator/cluster", signer: certificates.folder + "/ca")
            try folder.write("a.json", #"[{"id": "counter", "plugin": "counter"}]"#)
            try folder.write("operators.json", #"{"cluster": "admin", "alice": "viewer"}"#)
            let a = try await cluster.launch("a", arguments: Base.arguments(
                "a", in: folder, tls: certificates.flags("node-a"), extra: ["--operators", folder.path("operators.json")]))
            let address = try await ClusterTLSRefusalTests.address(of: a)
            // alice is listed by her certificate's name and gets in.
            let alice = try await ControlClient.connect(to: address, tls: try certificates.context("operator-alice"), timeout: .seconds(10))
            #expect(try await alice.request(.status).objectValue?["nodes"] != nil)
            await alice.close()
            await ClusterTLSRefusalTests.expectRefused("a certificate named cluster") {
                try await ControlClient.connect(to: address, tls: try certificates.context("operator-cluster"), timeout: .seconds(10))
            }
            #expect(await a.waitForLine(containing: "not listed in the operators file"))
        }
    }

    @Test("make-certs.sh refuses an operator named cluster, and its CA cannot sign a CA that signs members")
    func makeCertsReservesClusterAndLimitsThePath() async throws {
        let folder = try TestFolder()
        defer { folder.remove() }
        let certificates = try await TLSTestCertificates(in: folder)
        let (ended, output) = try await ChildProcess.run(
            URL(fileURLWithPath: "/bin/sh"), [TLSTestCertificates.script, certificates.folder, "operator", "cluster"],
            deadline: .seconds(30))
        #expect(ended?.status == 64)
        #expect(output.contains("cluster is reserved"), "\(output)")
        #expect(!FileManager.default.fileExists(atPath: certificates.folder + "/operator-cluster.pem"))
        // Someone holding a CA:TRUE certificate of the cluster CA mints a member certificate with it.
        try await Self.mint(certificates.folder + "/rogue-ca", san: "", signer: certificates.folder + "/ca", ca: true)
        try await Self.mint(certificates.folder + "/node-rogue", san: "URI:cordis://node/rogue", signer: certificates.folder + "/rogue-ca")
        let (verified, verdict) = try await ChildProcess.run(URL(fileURLWithPath: "/usr/bin/openssl"), [
            "verify", "-CAfile", certificates.folder + "/ca.pem", "-untrusted", certificates.folder + "/rogue-ca.pem",
            certificates.folder + "/node-rogue.pem",
        ], deadline: .seconds(30))
        #expect(verified?.status != 0, "the cluster CA let a CA it signed mint a member: \(verdict)")
        #expect(verdict.contains("path length"), "\(verdict)")
    }
}
