import Cordis
import CordisNode
import CordisWire
import Foundation

/// The call round trip over TCP with TLS, against the HMAC mode and the raw TCP echo, measured in the
/// same run: node A in this process, node B a `cordis-node` child, certificates made with the
/// `openssl` command line in a temporary folder (the commands of `deploy/make-certs.sh`).
///
/// Keys: `call_tcp_tls_p50_us`, `call_tcp_tls_p99_us`, `call_tcp_tls_ratio` (TLS p50 over HMAC p50) and
/// `call_tcp_tls_echo_ratio` (TLS p50 over the raw echo's p50).
@CordisActor
enum TLSCallBenchmark {
    static func calls(_ settings: AllBenchmark.Settings, into samples: inout AllBenchmark.Samples) async throws {
        let folder = try WireLatencyBench.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let raw = try WireLatencyBench.EchoPeer(mode: "raw", listen: "tcp:127.0.0.1:0", pinned: false, secret: nil)
        let echo = WireLatencyBench.Series(
            placement: "", socket: "tcp", kind: "raw",
            samples: try WireLatencyBench.rawRoundTrips(
                to: raw.address, frame: try WireLatencyBench.callFrame(secrets: nil), iterations: settings.callIterations))
        raw.stop()

        let hmacFolder = folder + "/hmac"
        try FileManager.default.createDirectory(atPath: hmacFolder, withIntermediateDirectories: true)
        let hmacPair = try await ClusterBenchmark.Pair.start(folder: hmacFolder, pinned: false, tcp: true)
        let hmac = WireLatencyBench.Series(
            placement: "", socket: "tcp", kind: "call", samples: try await hmacPair.callRoundTrips(settings.callIterations))
        await hmacPair.finish()

        let tls = WireLatencyBench.Series(
            placement: "", socket: "tcp", kind: "call", samples: try await tlsRoundTrips(folder: folder, iterations: settings.callIterations))
        samples.add("call_tcp_tls_p50_us", tls.p50)
        samples.add("call_tcp_tls_p99_us", tls.p99)
        samples.add("call_tcp_tls_ratio", tls.p50 / hmac.p50)
        samples.add("call_tcp_tls_echo_ratio", tls.p50 / echo.p50)
    }

    /// Round trips of `clock.now()` from A to B over a TLS link.
    static func tlsRoundTrips(folder: String, iterations: Int) async throws -> [UInt64] {
        try makeCertificates(in: folder)
        let port = try ProcessProbe.freeTCPPort()
        let entries = "\(folder)/b.json"
        try #"{"version":1,"entries":[{"id":"clock","plugin":"clock"}]}"#.write(toFile: entries, atomically: true, encoding: .utf8)
        let node = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
            .deletingLastPathComponent().appendingPathComponent("cordis-node")
        let child = Process()
        child.executableURL = node
        child.arguments = [
            "--name", "b", "--entries", entries, "--listen", "tcp:127.0.0.1:\(port)", "--log-level", "warn",
            "--tls-cert", "\(folder)/node-b.pem", "--tls-key", "\(folder)/node-b.key", "--tls-ca", "\(folder)/ca.pem",
        ]
        child.standardOutput = FileHandle.nullDevice
        try child.run()
        defer {
            child.terminate()
            child.waitUntilExit()
        }
        var catalog = PluginCatalog()
        catalog.register(FunctionPlugin<NoConfig>(name: "consumer", inject: [ClockServiceKey.self]) { _, _, _ in }, as: "consumer")
        let store = InMemoryEntryStore(EntryTree(entries: [Entry(id: "consumer", plugin: "consumer")]))
        var configuration = NodeConfiguration(name: "a", peers: [try Address(parsing: "tcp:127.0.0.1:\(port)")])
        configuration.tls = try TLSContext(TLSConfiguration(
            certificateFile: "\(folder)/node-a.pem", keyFile: "\(folder)/node-a.key", caFile: "\(folder)/ca.pem"))
        let a = try Node(
            configuration: configuration, catalog: catalog, remoteServices: BuiltinCatalog.remoteServices, store: store,
            context: Context(logLevel: .error))
        try await a.start()
        defer { Task { await a.stop() } }
        let clock = ContinuousClock()
        let deadline = clock.now + .seconds(20)
        var proxy: (any ClockAPI)?
        while proxy == nil {
            proxy = a.context.currentProvider(of: ClockServiceKey.name)?.value as? any ClockAPI
            if proxy == nil {
                guard clock.now < deadline else { throw BenchmarkError("no TLS link from a to b within 20 s") }
                try await Task.sleep(for: .milliseconds(1))
            }
        }
        guard let proxy else { throw BenchmarkError("no clock proxy on a") }
        for _ in 0..<200 { _ = try await proxy.now() }
        var samples: [UInt64] = []
        samples.reserveCapacity(iterations)
        for _ in 0..<iterations {
            let start = DispatchTime.now().uptimeNanoseconds
            _ = try await proxy.now()
            samples.append(DispatchTime.now().uptimeNanoseconds - start)
        }
        await a.stop()
        return samples
    }

    /// A CA and the certificates of nodes a and b, with the `openssl` command line.
    static func makeCertificates(in folder: String) throws {
        func openssl(_ arguments: [String]) throws {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = ["openssl"] + arguments
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            process.waitUntilExit()
            guard process.terminationStatus == 0 else { throw BenchmarkError("openssl \(arguments.prefix(2)) failed") }
        }
        let curve = ["-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256"]
        try openssl(["genpkey"] + curve + ["-out", "\(folder)/ca.key"])
        try openssl(["req", "-x509", "-new", "-key", "\(folder)/ca.key", "-subj", "/CN=bench-ca", "-days", "2",
                     "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign",
                     "-out", "\(folder)/ca.pem"])
        for name in ["a", "b"] {
            let base = "\(folder)/node-\(name)"
            try "subjectAltName=URI:cordis://node/\(name)\nextendedKeyUsage=serverAuth,clientAuth\n".write(
                toFile: base + ".ext", atomically: true, encoding: .utf8)
            try openssl(["genpkey"] + curve + ["-out", base + ".key"])
            try openssl(["req", "-new", "-key", base + ".key", "-subj", "/CN=\(name)", "-out", base + ".csr"])
            try openssl(["x509", "-req", "-in", base + ".csr", "-CA", "\(folder)/ca.pem", "-CAkey", "\(folder)/ca.key",
                         "-CAcreateserial", "-days", "2", "-extfile", base + ".ext", "-out", base + ".pem"])
            _ = chmod(base + ".key", 0o600)
        }
    }
}
