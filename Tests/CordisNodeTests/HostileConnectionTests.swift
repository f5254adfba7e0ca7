import CordisNode
import CordisProcessTesting
import CordisWire
import Foundation
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Hostile clients without the secret against a real `cordis-node` over TCP: churned connections,
/// half-open connections that hold the handshake slots, oversized hellos. The node's memory stays
/// bounded and a console with the secret still gets in. `CORDIS_LONG_TESTS=1` runs the long version.
/// A value shared with a thread of the test.
final class SharedBox<Value: Sendable>: Sendable {
    private let lock: Mutex<Value>
    init(_ value: Value) { lock = Mutex(value) }
    var value: Value { lock.withLock { $0 } }
    func set(_ value: Value) { lock.withLock { $0 = value } }
}

@Suite("Cluster: hostile connections", .serialized)
struct HostileConnectionTests {
    static let long = ProcessInfo.processInfo.environment["CORDIS_LONG_TESTS"] == "1"

    /// A node listening on TCP with a secret, the secret, and the node's port.
    struct Target {
        var member: ClusterMember
        var secrets: ClusterSecrets
        var address: Address
        var port: UInt16

        var pid: Int32 { member.process.process.processIdentifier }

        /// The node's resident memory in KiB (`VmRSS` of /proc/PID/status).
        func residentKiB() throws -> Int {
            let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
            let line = try #require(status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") })
            return try #require(Int(line.split(separator: " ", omittingEmptySubsequences: true)[1]))
        }

        /// A console with the secret, connected and answering `status`.
        func console(timeout: Duration = .seconds(10)) async throws -> ControlClient {
            let client = try await ControlClient.connect(to: address, name: "console", secrets: secrets, timeout: timeout)
            _ = try await client.request(.status)
            return client
        }
    }

    static func target(in cluster: TestCluster) async throws -> Target {
        let folder = cluster.folder
        let secret = try ClusterTCPTests.writeSecret("secret", "s", in: folder)
        try folder.write("n.json", "[]")
        let member = try await cluster.launch("n", arguments: ClusterTCPTests.arguments("n", secret: secret, in: folder))
        let address = try Address(parsing: try ClusterTCPTests.listeningAddress(of: member))
        guard case .tcp(_, let port) = address else { throw TransportError(.invalidAddress, "not TCP: \(address)") }
        return Target(member: member, secrets: try ClusterSecrets.load(files: [secret]), address: address, port: port)
    }

    /// A blocking TCP socket to the loopback `port` from the loopback address `source`, or -1.
    static func open(_ port: UInt16, from source: UInt32 = 0x7F00_0001) -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return -1 }
        var local = sockaddr_in()
        local.sin_family = sa_family_t(AF_INET)
        local.sin_addr.s_addr = source.bigEndian
        let bound = withUnsafePointer(to: &local) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0 else {
            close(fd)
            return -1
        }
        var remote = sockaddr_in()
        remote.sin_family = sa_family_t(AF_INET)
        remote.sin_port = port.bigEndian
        remote.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        let connected = withUnsafePointer(to: &remote) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else {
            close(fd)
            return -1
        }
        return fd
    }

    /// Writes all of `bytes`, stopping quietly when the node closed the connection.
    static func sendAll(_ fd: Int32, _ bytes: [UInt8]) {
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { send(fd, $0.baseAddress! + offset, bytes.count - offset, Int32(MSG_NOSIGNAL)) }
            if written <= 0 { return }
            offset += written
        }
    }

    /// Opens `count` connections one after the other, each sending one byte and closing.
    static func churn(_ port: UInt16, count: Int) async {
        await onOwnThread {
            for _ in 0..<count {
                let fd = open(port)
                guard fd >= 0 else { continue }
                sendAll(fd, [0x00])
                close(fd)
            }
        }
    }

    @Test("Churned connections without the secret leave the node's memory bounded and a console still gets in")
    func churnKeepsMemoryBounded() async throws {
        try await TestCluster.run { cluster in
            let target = try await Self.target(in: cluster)
            // Warm up the allocator and the code paths, then measure.
            await Self.churn(target.port, count: 500)
            let warm = try await target.console()
            await warm.close()
            let before = try target.residentKiB()
            let count = Self.long ? 30_000 : 2_000
            let started = ContinuousClock.now
            await Self.churn(target.port, count: count)
            let churned = ContinuousClock.now - started
            let console = try await target.console()
            await console.close()
            let after = try target.residentKiB()
            print("churn: \(count) connections in \(churned); VmRSS \(before) KiB before, \(after) KiB after")
            // A leak of 3 KB per connection fails this bound (the one found leaked about 6 KB); allocator
            // noise stays far below it (measured: under 1 MiB after 30,000).
            let bound = Self.long ? 16 * 1024 : 6 * 1024
            #expect(after - before < bound, "VmRSS grew from \(before) KiB to \(after) KiB after \(count) connections")
        }
    }

    @Test("A console with the secret gets in while half-open connections without it hold every slot")
    func consoleGetsInDuringAFlood() async throws {
        try await TestCluster.run { cluster in
            let target = try await Self.target(in: cluster)
            let stop = SharedBox(false)
            let held = SharedBox(0)
            let port = target.port
            let holding = Int(Self.long ? 4_000 : 1_500)
            let flood = Task.detached {
                await onOwnThread {
                    var fds: [Int32] = []
                    var index = 0
                    // From 127.0.0.2: the console connects from 127.0.0.1.
                    while !stop.value {
                        let fd = Self.open(port, from: 0x7F00_0002)
                        if fd >= 0 {
                            if fds.count < holding { fds.append(fd) } else {
                                close(fds[index % holding])
                                fds[index % holding] = fd
                                index += 1
                            }
                            held.set(fds.count)
                        }
                    }
                    for fd in fds { close(fd) }
                }
            }
            defer { stop.set(true) }
            let deadline = ContinuousClock.now + .seconds(30)
            while held.value < 1_100, ContinuousClock.now < deadline { await Task.yield() }
            #expect(held.value >= 1_100, "the flood holds more connections than the node's limit of 1,024")
            let started = ContinuousClock.now
            let console = try await target.console(timeout: .seconds(10))
            let took = ContinuousClock.now - started
            await console.close()
            print("flood: a console got in after \(took) with \(held.value) half-open connections held")
            #expect(took < .seconds(10))
            stop.set(true)
            await flood.value
        }
    }

    /// Floods `port` from `sources` (IPv4 loopback addresses) until `stop`: each connection sends five
    /// bytes of a frame and stalls; at most `holding` are kept, the oldest closed for each new one.
    static func stalledFlood(_ port: UInt16, sources: [UInt32], holding: Int, stop: SharedBox<Bool>, held: SharedBox<Int>) async {
        await onOwnThread {
            var fds: [Int32] = []
            var index = 0
            while !stop.value {
                let fd = Self.open(port, from: sources[index % sources.count])
                index += 1
                guard fd >= 0 else { continue }
                Self.sendAll(fd, [0, 0, 0, 64, 0x7B])
                fds.append(fd)
                if fds.count > holding { close(fds.removeFirst()) }
                held.set(fds.count)
            }
            for fd in fds { close(fd) }
        }
    }

    @Test("Consoles get in, each in turn, while stalled connections flood the node from their own address or from 100 others")
    func consolesGetInDuringAStalledFlood() async throws {
        try await TestCluster.run { cluster in
            let target = try await Self.target(in: cluster)
            for sources in [[UInt32(0x7F00_0001)], (0..<100).map { 0x7F00_0100 + UInt32($0) }] {
                let stop = SharedBox(false)
                let held = SharedBox(0)
                let port = target.port
                let flood = Task.detached { await Self.stalledFlood(port, sources: sources, holding: 600, stop: stop, held: held) }
                let deadline = ContinuousClock.now + .seconds(30)
                while held.value < 600, ContinuousClock.now < deadline { await Task.yield() }
                var admitted = 0
                var failures: [String] = []
                for _ in 0..<5 {
                    do {
                        let console = try await target.console(timeout: .seconds(5))
                        admitted += 1
                        await console.close()
                    } catch {
                        failures.append("\(error)")
                    }
                }
                stop.set(true)
                await flood.value
                #expect(admitted == 5, "\(admitted) of 5 consoles got in during a flood from \(sources.count) addresses: \(failures)")
            }
        }
    }

    @Test("Oversized hellos do not make the node buffer them")
    func oversizedHellosAreNotBuffered() async throws {
        try await TestCluster.run { cluster in
            let target = try await Self.target(in: cluster)
            let before = try target.residentKiB()
            let count = Self.long ? 100 : 40
            let size = 4 * 1024 * 1024 - 16
            var hello: [UInt8] = [UInt8(size >> 24), UInt8((size >> 16) & 0xFF), UInt8((size >> 8) & 0xFF), UInt8(size & 0xFF)]
            hello += Array(#"{"type":"hello","pad":""#.utf8)
            hello += [UInt8](repeating: UInt8(ascii: "x"), count: size - hello.count + 4 - 2) + Array(#""}"#.utf8)
            let frame = hello
            let port = target.port
            // Keep the node busy with churn while the hellos arrive.
            async let busy: Void = Self.churn(port, count: Self.long ? 5_000 : 500)
            await withTaskGroup(of: Void.self) { group in
                for _ in 0..<count {
                    group.addTask {
                        await onOwnThread {
                            let fd = Self.open(port)
                            guard fd >= 0 else { return }
                            Self.sendAll(fd, frame)
                            close(fd)
                        }
                    }
                }
            }
            await busy
            let console = try await target.console()
            await console.close()
            let after = try target.residentKiB()
            print("oversized hellos: \(count) of 4 MiB; VmRSS \(before) KiB before, \(after) KiB after")
            // One hello buffered in full costs 4 MiB and more: a bound of a few of them.
            #expect(after - before < 12 * 1024, "VmRSS grew from \(before) KiB to \(after) KiB")
        }
    }

    @Test("A reject echoes a bounded part of what the stranger sent")
    func rejectReasonsAreBounded() async throws {
        try await TestCluster.run { cluster in
            let target = try await Self.target(in: cluster)
            let number = String(repeating: "9", count: 60_000)
            let json = #"{"type":"hello","version":"1.2","role":"node","name":"x","incarnation":"i","addresses":[],"capabilities":[],"auth":"hmac-sha256","nonce":"# + number + "}"
            var frame: [UInt8] = []
            let length = json.utf8.count
            frame += [UInt8(length >> 24), UInt8((length >> 16) & 0xFF), UInt8((length >> 8) & 0xFF), UInt8(length & 0xFF)]
            frame += Array(json.utf8)
            let payload = frame
            let port = target.port
            let answer = SharedBox<[UInt8]>([])
            await onOwnThread {
                let fd = Self.open(port)
                guard fd >= 0 else { return }
                Self.sendAll(fd, payload)
                var buffer = [UInt8](repeating: 0, count: 256 * 1024)
                var received: [UInt8] = []
                while true {
                    let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
                    if count <= 0 { break }
                    received += buffer[0..<count]
                }
                close(fd)
                answer.set(received)
            }
            let received = answer.value
            let text = String(decoding: received.dropFirst(4), as: UTF8.self)
            #expect(text.contains("\"reject\""), "the node answered: \(text.prefix(200))")
            #expect(received.count < 1024, "the node answered \(received.count) bytes")
        }
    }
}
