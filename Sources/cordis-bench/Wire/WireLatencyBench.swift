import CCordisShim
import CordisJSON
import CordisWire
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// The wire round-trip benchmark: a small `call`/`result` exchange over a `Link` (Unix socket, and
/// TCP loopback with the per-frame MAC), next to a raw blocking echo of the same bytes over the same
/// kind of socket and a frame echo through the event loop without JSON, all measured in one run, with
/// both processes pinned to CPU 0 and unpinned.
///
/// `cordis-bench wire [--iterations N] [--json]` runs it; the peer is this binary re-executed as
/// `cordis-bench wire-echo-server --mode raw|frames|link --listen ADDR`, served by `echoServerMain`.
enum WireLatencyBench {
    /// One measured series.
    struct Series {
        var placement: String
        var socket: String
        var kind: String
        var p50: Double
        var p99: Double
        var mean: Double
    }

    /// The environment variable that carries the cluster secret to the echo server.
    static let secretVariable = "CORDIS_BENCH_SECRET"

    // MARK: Orchestrator

    /// Runs the benchmark and prints the table (or JSON); returns the exit code.
    static func main(arguments: [String]) async -> Int32 {
        var iterations = 10_000
        var json = false
        var index = 0
        while index < arguments.count {
            switch arguments[index] {
            case "--iterations":
                index += 1
                guard index < arguments.count, let value = Int(arguments[index]), value > 0 else {
                    printError("--iterations needs a positive number")
                    return 64
                }
                iterations = value
            case "--json": json = true
            default:
                printError("unknown argument \(arguments[index])")
                return 64
            }
            index += 1
        }
        do {
            let series = try await run(iterations: iterations)
            report(series, json: json)
            return 0
        } catch {
            printError("\(error)")
            return 1
        }
    }

    static func run(iterations: Int) async throws -> [Series] {
        var all: [Series] = []
        let secret = (0..<48).map { _ in "abcdefghijklmnopqrstuvwxyz0123456789".randomElement() ?? "x" }
        let secretText = String(secret)
        let secrets = try ClusterSecrets(proving: ClusterSecret(bytes: Array(secretText.utf8), source: "bench"))
        for pinned in [true, false] {
            _ = ccordis_set_process_affinity(pinned ? 0 : -1)
            let loop = try EventLoop(name: "bench-io")
            defer { Task { await loop.shutdown() } }
            let placement = pinned ? "pinned-cpu0" : "unpinned"
            for socket in ["unix", "tcp"] {
                let folder = try temporaryFolder()
                func address(_ name: String) -> String {
                    socket == "unix" ? "unix:\(folder)/\(name).sock" : "tcp:127.0.0.1:0"
                }
                let sample = try callFrame(secrets: socket == "tcp" ? secrets : nil)
                // Raw blocking echo of the same bytes.
                let raw = try EchoPeer(mode: "raw", listen: address("raw"), pinned: pinned, secret: nil)
                let rawTimes = try rawRoundTrips(to: raw.address, frame: sample, iterations: iterations)
                raw.stop()
                all.append(Series(placement: placement, socket: socket, kind: "raw-echo", samples: rawTimes))
                for executor in ["pool", "loop"] {
                    // Frames echoed through the event loop on both sides, no JSON.
                    let frames = try EchoPeer(mode: "frames", listen: address("frames"), pinned: pinned, secret: nil, executor: executor)
                    let payload = Array(sample.dropFirst(4))
                    let frameAddress = frames.address
                    let frameTimes = try await onExecutor(executor, loop) {
                        try await frameRoundTrips(to: frameAddress, loop: loop, payload: payload, iterations: iterations)
                    }
                    frames.stop()
                    all.append(Series(placement: placement, socket: socket, kind: "frame-echo@\(executor)", samples: frameTimes))
                    // The Link: JSON call/result, MACed on TCP.
                    let link = try EchoPeer(
                        mode: "link", listen: address("link"), pinned: pinned, secret: socket == "tcp" ? secretText : nil,
                        executor: executor)
                    let linkSecrets = socket == "tcp" ? secrets : nil
                    let linkAddress = link.address
                    let linkTimes = try await onExecutor(executor, loop) {
                        try await linkRoundTrips(to: linkAddress, loop: loop, secrets: linkSecrets, iterations: iterations)
                    }
                    link.stop()
                    let kind = socket == "tcp" ? "link-call-mac@\(executor)" : "link-call@\(executor)"
                    all.append(Series(placement: placement, socket: socket, kind: kind, samples: linkTimes))
                }
                try? FileManager.default.removeItem(atPath: folder)
            }
            await loop.shutdown()
        }
        _ = ccordis_set_process_affinity(-1)
        return all
    }

    /// Runs `body` in a task on the default pool, or on the loop thread (`executor == "loop"`).
    static func onExecutor<T: Sendable>(
        _ executor: String, _ loop: EventLoop, _ body: @escaping @Sendable () async throws -> T
    ) async throws -> T {
        if executor == "loop" { return try await Task(executorPreference: loop) { try await body() }.value }
        return try await Task.detached { try await body() }.value
    }

    static func report(_ series: [Series], json: Bool) {
        if json {
            var rows: [JSONValue] = []
            for row in series {
                let raw = series.first { $0.placement == row.placement && $0.socket == row.socket && $0.kind == "raw-echo" }
                var object: JSONObject = [
                    "bench": "wire", "placement": .string(row.placement), "socket": .string(row.socket),
                    "kind": .string(row.kind), "p50_us": .number(row.p50), "p99_us": .number(row.p99),
                    "mean_us": .number(row.mean),
                ]
                if let raw { object["p50_vs_raw"] = .number(row.p50 / raw.p50) }
                rows.append(.object(object))
            }
            var output: [UInt8] = []
            JSONSerializer.append(.array(rows), to: &output)
            print(String(decoding: output, as: UTF8.self))
        } else {
            print("wire round trip (µs)                  p50      p99     mean   p50/raw")
            for row in series {
                let raw = series.first { $0.placement == row.placement && $0.socket == row.socket && $0.kind == "raw-echo" }
                let ratio = raw.map { String(format: "%6.2fx", row.p50 / $0.p50) } ?? ""
                let label = "\(row.placement) \(row.socket) \(row.kind)".padding(toLength: 36, withPad: " ", startingAt: 0)
                print("\(label) \(String(format: "%7.1f  %7.1f  %7.1f", row.p50, row.p99, row.mean))  \(ratio)")
            }
        }
        flushOutput()
    }

    /// A framed `call` like a remote `clock.now()` (sealed when `secrets` is given, as the Link sends it).
    static func callFrame(secrets: ClusterSecrets?) throws -> [UInt8] {
        var buffer: [UInt8] = []
        try FrameEncoder().append(payload: callMessage(id: 1).encoded, to: &buffer)
        guard secrets != nil else { return buffer }
        // A sealed frame is 82 bytes longer (`"seq":N,"mac":"…",`): pad to that size.
        var padded: [UInt8] = []
        try FrameEncoder().append(payload: callMessage(id: 1).encoded + [UInt8](repeating: 0x20, count: 82), to: &padded)
        return padded
    }

    static func callMessage(id: Int) -> WireMessage {
        .call(RemoteCall(id: id, service: "clock", realm: "blue", method: "now", args: ["_0": "utc"]))
    }

    static func rawRoundTrips(to address: Address, frame: [UInt8], iterations: Int) throws -> [UInt64] {
        let fd = try blockingConnect(address)
        defer { close(fd) }
        var reply = [UInt8](repeating: 0, count: frame.count)
        var times: [UInt64] = []
        times.reserveCapacity(iterations)
        for round in 0..<(iterations + iterations / 10) {
            let start = DispatchTime.now().uptimeNanoseconds
            try writeAll(fd, frame)
            try readExactly(fd, &reply, count: frame.count)
            let end = DispatchTime.now().uptimeNanoseconds
            if round >= iterations / 10 { times.append(end - start) }
        }
        return times
    }

    static func frameRoundTrips(to address: Address, loop: EventLoop, payload: [UInt8], iterations: Int) async throws -> [UInt64] {
        let connection = try await loop.connect(to: address, limits: ConnectionLimits(handshakeTimeout: nil))
        defer { connection.close() }
        var replies = connection.frames.makeAsyncIterator()
        var times: [UInt64] = []
        times.reserveCapacity(iterations)
        for round in 0..<(iterations + iterations / 10) {
            let start = DispatchTime.now().uptimeNanoseconds
            try connection.enqueue(payload)
            guard try await replies.next() != nil else { throw TransportError(.closed, "echo peer closed") }
            let end = DispatchTime.now().uptimeNanoseconds
            if round >= iterations / 10 { times.append(end - start) }
        }
        return times
    }

    static func linkRoundTrips(to address: Address, loop: EventLoop, secrets: ClusterSecrets?, iterations: Int) async throws -> [UInt64] {
        let configuration = HandshakeConfiguration(
            identity: PeerIdentity(role: .node, name: "bench-client", incarnation: UUID().uuidString), secrets: secrets)
        let link = try await Link.connect(to: address, on: loop, configuration: configuration)
        defer { link.close(reason: "bench done") }
        var replies = link.messages.makeAsyncIterator()
        var times: [UInt64] = []
        times.reserveCapacity(iterations)
        for round in 0..<(iterations + iterations / 10) {
            let start = DispatchTime.now().uptimeNanoseconds
            try link.enqueue(callMessage(id: round))
            guard case .result(let result)? = try await replies.next(), result.id == round else {
                throw TransportError(.protocolViolation, "echo peer answered something else than result \(round)")
            }
            let end = DispatchTime.now().uptimeNanoseconds
            if round >= iterations / 10 { times.append(end - start) }
        }
        return times
    }

    // MARK: Echo server (`cordis-bench wire-echo-server`)

    /// Serves echoes until stdin closes or the process is terminated; prints `listening on ADDR`.
    ///
    /// `--mode raw` echoes frames with blocking reads and writes (no event loop, no JSON); `frames`
    /// echoes frames through an `EventLoop` `Connection`; `link` answers every `call` with a `result`
    /// over a `Link` (secret from `CORDIS_BENCH_SECRET` when set). `--executor loop` runs the
    /// per-connection tasks on the event-loop thread instead of the default pool.
    static func echoServerMain(arguments: [String]) async -> Int32 {
        var mode = "link"
        var listen = "unix:/tmp/cordis-bench-echo.sock"
        var executor = "pool"
        var index = 0
        while index + 1 < arguments.count {
            switch arguments[index] {
            case "--mode": mode = arguments[index + 1]
            case "--listen": listen = arguments[index + 1]
            case "--executor": executor = arguments[index + 1]
            default:
                printError("unknown argument \(arguments[index])")
                return 64
            }
            index += 2
        }
        do {
            let address = try Address(parsing: listen)
            if mode == "raw" {
                try serveRawEcho(on: address)
                return 0
            }
            let loop = try EventLoop(name: "echo-io")
            let listener = try loop.listen(on: address, options: ListenerOptions(
                limits: ConnectionLimits(handshakeTimeout: mode == "link" ? .seconds(5) : nil), policy: .everyone))
            print("listening on \(listener.address)")
            flushOutput()
            let secret = ProcessInfo.processInfo.environment[secretVariable]
            let secrets = try secret.map { try ClusterSecrets(proving: ClusterSecret(bytes: Array($0.utf8), source: "env")) }
            for await connection in listener.connections {
                Task(executorPreference: executor == "loop" ? loop : nil) {
                    if mode == "frames" {
                        connection.markEstablished()
                        for try await frame in connection.frames { try connection.enqueue(frame) }
                        return
                    }
                    let configuration = HandshakeConfiguration(
                        identity: PeerIdentity(role: .node, name: "bench-echo", incarnation: UUID().uuidString),
                        secrets: secrets)
                    let link = try await Link.establish(connection, side: .responder, configuration: configuration)
                    for try await message in link.messages {
                        if case .call(let call) = message {
                            try link.enqueue(.result(RemoteResult(id: call.id, value: ["node": "bench-echo", "seconds": 1.5])))
                        }
                    }
                }
            }
            return 0
        } catch {
            printError("\(error)")
            return 1
        }
    }

    /// Echoes frames on blocking sockets, one client at a time: no event loop, no JSON.
    static func serveRawEcho(on address: Address) throws {
        let fd: Int32
        switch address {
        case .unix(let path):
            fd = ccordis_stream_socket(AF_UNIX)
            guard ccordis_unix_bind(fd, path) == 0 else { throw TransportError(.addressUnavailable, "bind \(address)") }
        case .tcp(let host, let port):
            fd = ccordis_stream_socket(ccordis_numeric_family(host))
            guard ccordis_inet_bind(fd, host, port) == 0 else { throw TransportError(.addressUnavailable, "bind \(address)") }
        }
        _ = ccordis_set_blocking(fd)
        guard Glibc.listen(fd, 16) == 0 else { throw TransportError(.systemError, "listen") }
        var name = [CChar](repeating: 0, count: 160)
        _ = name.withUnsafeMutableBufferPointer { ccordis_socket_address(fd, 0, $0.baseAddress, $0.count) }
        print("listening on \(name.withUnsafeBufferPointer { String(cString: $0.baseAddress!) })")
        flushOutput()
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        while true {
            let client = Glibc.accept(fd, nil, nil)
            guard client >= 0 else { continue }
            if !address.isUnix { _ = ccordis_set_no_delay(client) }
            var header = [UInt8](repeating: 0, count: 4)
            while (try? readExactly(client, &header, count: 4)) != nil {
                let length = header.reduce(0) { $0 << 8 | Int($1) }
                guard length <= buffer.count, (try? readExactly(client, &buffer, count: length)) != nil else { break }
                guard (try? writeAll(client, header)) != nil,
                    (try? writeAll(client, Array(buffer[0..<length]))) != nil
                else { break }
            }
            close(client)
        }
    }

    // MARK: Plumbing

    /// The echo server child process, pinned to CPU 0 with `taskset` or not.
    final class EchoPeer {
        let process = Process()
        let address: Address

        init(mode: String, listen: String, pinned: Bool, secret: String?, executor: String = "pool") throws {
            let executable = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().path
            let serverArguments = [executable, "wire-echo-server", "--mode", mode, "--listen", listen, "--executor", executor]
            if pinned {
                process.executableURL = URL(fileURLWithPath: "/usr/bin/taskset")
                process.arguments = ["-c", "0"] + serverArguments
            } else {
                process.executableURL = URL(fileURLWithPath: executable)
                process.arguments = Array(serverArguments.dropFirst())
            }
            var environment = ProcessInfo.processInfo.environment
            environment[WireLatencyBench.secretVariable] = secret
            process.environment = environment
            let output = Pipe()
            process.standardOutput = output
            try process.run()
            var line: [UInt8] = []
            let handle = output.fileHandleForReading
            while !line.contains(UInt8(ascii: "\n")) {
                let data = handle.availableData
                if data.isEmpty { break }
                line.append(contentsOf: data)
            }
            let text = String(decoding: line, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            guard text.hasPrefix("listening on ") else {
                process.terminate()
                throw TransportError(.systemError, "echo server did not start: \(text)")
            }
            address = try Address(parsing: String(text.dropFirst("listening on ".count)))
        }

        func stop() {
            process.terminate()
            process.waitUntilExit()
        }
    }

    static func blockingConnect(_ address: Address) throws -> Int32 {
        switch address {
        case .unix(let path):
            let fd = ccordis_stream_socket(AF_UNIX)
            _ = ccordis_set_blocking(fd)
            guard ccordis_unix_connect(fd, path) == 0 else { throw TransportError(.connectionRefused, "connect \(address)") }
            return fd
        case .tcp(let host, let port):
            let fd = ccordis_stream_socket(ccordis_numeric_family(host))
            _ = ccordis_set_blocking(fd)
            guard ccordis_inet_connect(fd, host, port) == 0 else { throw TransportError(.connectionRefused, "connect \(address)") }
            _ = ccordis_set_no_delay(fd)
            return fd
        }
    }

    static func writeAll(_ fd: Int32, _ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { ccordis_send(fd, $0.baseAddress! + offset, $0.count - offset) }
            guard written > 0 else { throw TransportError(.connectionReset, "write failed") }
            offset += written
        }
    }

    static func readExactly(_ fd: Int32, _ buffer: inout [UInt8], count: Int) throws {
        var offset = 0
        while offset < count {
            let got = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress! + offset, count - offset) }
            guard got > 0 else { throw TransportError(.connectionReset, "read failed") }
            offset += got
        }
    }

    static func temporaryFolder() throws -> String {
        var template = Array("/tmp/cb-XXXXXX".utf8CString)
        guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
            throw TransportError(.systemError, "mkdtemp failed")
        }
        return String(cString: made)
    }

    /// Flushes standard output (lines other processes wait for).
    static func flushOutput() {
        fflush(nil)
    }

    static func printError(_ text: String) {
        FileHandle.standardError.write(Data("error: \(text)\n".utf8))
    }
}

extension WireLatencyBench.Series {
    /// Percentiles in microseconds from nanosecond samples.
    init(placement: String, socket: String, kind: String, samples: [UInt64]) {
        let sorted = samples.sorted()
        func percentile(_ fraction: Double) -> Double {
            guard !sorted.isEmpty else { return 0 }
            let index = min(sorted.count - 1, Int(Double(sorted.count) * fraction))
            return Double(sorted[index]) / 1000
        }
        let total = sorted.reduce(0.0) { $0 + Double($1) }
        self.init(
            placement: placement, socket: socket, kind: kind, p50: percentile(0.5), p99: percentile(0.99),
            mean: sorted.isEmpty ? 0 : total / Double(sorted.count) / 1000)
    }

    /// The lowest and highest p50, in microseconds, of `windows` consecutive equal runs of `samples`
    /// (nanoseconds, in the order taken): how much the series moved while it ran. Nil when there are
    /// fewer samples than windows.
    static func windowP50Range(of samples: [UInt64], windows: Int) -> (lowest: Double, highest: Double)? {
        let size = samples.count / max(1, windows)
        guard size > 0 else { return nil }
        // Bounded: `windows` windows of `size` samples, each's p50 as the series' own is taken.
        let medians = stride(from: 0, to: size * windows, by: size).map { start in
            Self(placement: "", socket: "", kind: "", samples: Array(samples[start..<(start + size)])).p50
        }
        guard let lowest = medians.min(), let highest = medians.max() else { return nil }
        return (lowest, highest)
    }
}
