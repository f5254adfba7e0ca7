import CordisProcessTesting
import CordisWire
import Foundation
import Testing

/// The certificates of a TLS test, made by `deploy/make-certs.sh` in the test's folder: CA `ca` with
/// nodes a, b, c and operators alice, bob, carol, and an expired operator `old` and an expired node
/// `stale`; CA `ca2` (the rotation's new CA) with node b; CA `other` (a foreign cluster) with node b and
/// operator alice; `bundle.pem` holds `ca` and `ca2`.
struct TLSTestCertificates: Sendable {
    let folder: String

    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("deploy/make-certs.sh").path

    init(in folder: TestFolder) async throws {
        self.folder = folder.path("certs")
        let runs: [([String], [String: String])] = [
            (["ca"], [:]), (["node", "a"], [:]), (["node", "b"], [:]), (["node", "c"], [:]),
            (["operator", "alice"], [:]), (["operator", "bob"], [:]), (["operator", "carol"], [:]),
            (["operator", "old"], ["DAYS": "-1"]), (["node", "stale"], ["DAYS": "-1"]),
        ]
        for (arguments, environment) in runs { try await Self.run([self.folder] + arguments, environment) }
        for (sub, name) in [("ca2", "cordis-ca-2"), ("other", "other-ca")] {
            try await Self.run([self.folder + "/" + sub, "ca", name], [:])
            try await Self.run([self.folder + "/" + sub, "node", "b"], [:])
        }
        try await Self.run([self.folder + "/other", "operator", "alice"], [:])
        let bundle = try String(contentsOfFile: self.folder + "/ca.pem", encoding: .utf8)
            + String(contentsOfFile: self.folder + "/ca2/ca.pem", encoding: .utf8)
        try bundle.write(toFile: self.folder + "/bundle.pem", atomically: true, encoding: .utf8)
    }

    static func run(_ arguments: [String], _ environment: [String: String]) async throws {
        var command = ["/bin/sh", script] + arguments
        if !environment.isEmpty { command = ["/usr/bin/env"] + environment.map { "\($0.key)=\($0.value)" } + command }
        let (ended, output) = try await ChildProcess.run(
            URL(fileURLWithPath: command[0]), Array(command.dropFirst()), deadline: .seconds(60))
        try #require(ended?.status == 0, "make-certs.sh \(arguments): \(output)")
    }

    /// The flags of a node holding `holder`'s certificate (`node-a`, `ca2/node-b`) and trusting `ca`.
    func flags(_ holder: String, ca: String = "ca.pem") -> [String] {
        ["--tls-cert", "\(folder)/\(holder).pem", "--tls-key", "\(folder)/\(holder).key", "--tls-ca", "\(folder)/\(ca)"]
    }

    /// A TLS context holding `holder`'s certificate and trusting `ca`.
    func context(_ holder: String, ca: String = "ca.pem") throws -> TLSContext {
        try TLSContext(TLSConfiguration(
            certificateFile: "\(folder)/\(holder).pem", keyFile: "\(folder)/\(holder).key", caFile: "\(folder)/\(ca)"))
    }
}
