import CordisConsole
import CordisNode
import CordisProcessTesting
import CordisWire
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The TLS flags of `cordis-node` and `cordis-console`: all three or none, also in a config file and
/// (the console) in `CORDIS_CONSOLE_TLS_*`; TLS alone allows a TCP listener; the files are checked at
/// start with errors that name them.
@Suite("TLS flags", .serialized)
struct TLSOptionsTests {
    static let tls = ["--tls-cert", "n.pem", "--tls-key", "n.key", "--tls-ca", "ca.pem"]

    @Test("the three flags set the TLS files, on the command line and in a config file, and allow a TCP listener without a secret")
    func flags() throws {
        let options = try SecurityOptionsTests.options(Self.tls + ["--listen", "tcp:127.0.0.1:7400"])
        #expect(options.tlsCertificateFile == "n.pem" && options.tlsKeyFile == "n.key" && options.tlsCAFile == "ca.pem")
        let configured = try SecurityOptionsTests.options(
            ["--config", "c.json"], config: #"{"tls-cert": "c.pem", "tls-key": "c.key", "tls-ca": "ca.pem", "listen": "tcp:127.0.0.1:7400"}"#)
        #expect(configured.tlsCertificateFile == "c.pem" && configured.tlsCAFile == "ca.pem")
        let plain = try SecurityOptionsTests.options([])
        #expect(plain.tlsCertificateFile == nil && plain.tlsKeyFile == nil && plain.tlsCAFile == nil)
    }

    @Test("one or two of the three flags is a usage error naming the missing ones")
    func allThreeOrNone() throws {
        for (given, missing) in [(["--tls-cert", "n.pem"], "--tls-key and --tls-ca are missing"),
                                 (["--tls-cert", "n.pem", "--tls-key", "n.key"], "--tls-ca is missing")] {
            do {
                _ = try SecurityOptionsTests.options(given)
                Issue.record("\(given) was accepted")
            } catch {
                #expect((error as? NodeOptionsError)?.exitCode == 64)
                #expect("\(error)".contains(missing), "\(error)")
            }
        }
        do {
            _ = try SecurityOptionsTests.options(["--listen", "tcp:127.0.0.1:7400"])
            Issue.record("TCP without TLS, secret or --insecure was accepted")
        } catch {
            #expect("\(error)".contains("without a secret or TLS"), "\(error)")
        }
    }

    @Test("the node checks the files at start: unreadable, a key open to others, a certificate naming another node")
    func filesAreChecked() async throws {
        let folder = try TestFolder()
        defer { folder.remove() }
        let certificates = try await TLSTestCertificates(in: folder)
        func context(_ name: String, _ certificate: String, key: String? = nil) throws(TLSError) -> TLSContext? {
            var options = NodeOptions(name: name, entriesFile: "x.json")
            options.tlsCertificateFile = "\(certificates.folder)/\(certificate).pem"
            options.tlsKeyFile = key ?? "\(certificates.folder)/\(certificate).key"
            options.tlsCAFile = "\(certificates.folder)/ca.pem"
            return try NodeTLS.context(options)
        }
        #expect(try context("a", "node-a")?.ownNames == [TLSPeerName(.node, "a")])
        #expect(throws: TLSError.self) { try context("a", "node-a", key: folder.path("missing.key")) }
        do {
            _ = try context("a", "node-a", key: folder.path("missing.key"))
        } catch {
            #expect(error.message.contains("cannot read --tls-key"), "\(error)")
        }
        let open = folder.path("open.key")
        try FileManager.default.copyItem(atPath: "\(certificates.folder)/node-a.key", toPath: open)
        #expect(chmod(open, 0o644) == 0)
        do {
            _ = try context("a", "node-a", key: open)
            Issue.record("a key readable by others was accepted")
        } catch {
            #expect(error.message.contains("chmod 600"), "\(error)")
        }
        do {
            _ = try context("b", "node-a")
            Issue.record("a certificate naming a was accepted for node b")
        } catch {
            #expect(error.message.contains("names cordis://node/a, not this node (cordis://node/b)"), "\(error)")
        }
        do {
            _ = try context("a", "node-a", key: "\(certificates.folder)/node-b.key")
            Issue.record("a key that is not the certificate's was accepted")
        } catch {
            #expect(error.message.contains("does not match"), "\(error)")
        }
    }

    @Test("the console takes the three flags or CORDIS_CONSOLE_TLS_* variables, all three or none")
    func console() throws {
        let flags = try ConsoleArguments(parsing: Self.tls + ["status"])
        #expect(flags.tlsCertificate == "n.pem" && flags.tlsKey == "n.key" && flags.tlsCA == "ca.pem")
        let environment = ["CORDIS_CONSOLE_TLS_CERT": "e.pem", "CORDIS_CONSOLE_TLS_KEY": "e.key", "CORDIS_CONSOLE_TLS_CA": "eca.pem"]
        let fromEnvironment = try ConsoleArguments(parsing: ["status"], environment: environment)
        #expect(fromEnvironment.tlsCertificate == "e.pem" && fromEnvironment.tlsCA == "eca.pem")
        let overridden = try ConsoleArguments(parsing: ["--tls-cert", "f.pem", "status"], environment: environment)
        #expect(overridden.tlsCertificate == "f.pem" && overridden.tlsKey == "e.key")
        #expect(throws: ConsoleError.self) { try ConsoleArguments(parsing: ["--tls-cert", "n.pem", "status"]) }
    }
}
