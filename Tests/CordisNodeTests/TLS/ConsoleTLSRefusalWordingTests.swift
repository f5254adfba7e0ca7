import CordisProcessTesting
import Foundation
import Testing

/// A console that a TLS node refuses learns why in words it can act on, not libssl's alert names.
@Suite("Console: TLS refusals in words an operator can act on", .serialized)
struct ConsoleTLSRefusalWordingTests {
    typealias Base = ClusterTLSTests

    @Test("a console whose certificate is from a CA the node does not trust is told so, and an unlisted operator who it was seen as")
    func refusalsAreExplained() async throws {
        try await TestCluster.run { cluster in
            let folder = cluster.folder
            let certificates = try await TLSTestCertificates(in: folder)
            try folder.write("a.json", #"[{"id": "counter", "plugin": "counter"}]"#)
            try folder.write("operators.json", #"{"alice": "viewer"}"#)
            let a = try await cluster.launch(
                "a", arguments: Base.arguments(
                    "a", in: folder, tls: certificates.flags("node-a"), extra: ["--operators", folder.path("operators.json")]))
            let address = try await Base.tcpAddress(of: a)
            func console(_ holder: String) async throws -> (Int32?, String) {
                let (ended, output) = try await ChildProcess.run(
                    ConsoleFaultTests.consoleExecutable,
                    ["--node", address, "--tls-cert", "\(certificates.folder)/\(holder).pem",
                     "--tls-key", "\(certificates.folder)/\(holder).key", "--tls-ca", "\(certificates.folder)/ca.pem", "members"],
                    directory: folder.url, deadline: .seconds(60))
                return (ended?.status, output)
            }
            let foreign = try await console("other/operator-alice")
            #expect(foreign.0 == 69, "\(foreign.1)")
            #expect(foreign.1.contains("does not trust this console's certificate"), "\(foreign.1)")
            #expect(foreign.1.contains("cluster's CA"), "\(foreign.1)")
            #expect(!foreign.1.contains("tlsv1 alert"), "\(foreign.1)")
            let unlisted = try await console("operator-carol")
            #expect(unlisted.0 == 69, "\(unlisted.1)")
            #expect(unlisted.1.contains("seen as carol"), "\(unlisted.1)")
            #expect(unlisted.1.contains("operators file"), "\(unlisted.1)")
        }
    }
}
