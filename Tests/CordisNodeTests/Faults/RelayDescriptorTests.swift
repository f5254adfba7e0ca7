import CordisProcessTesting
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The test relays run in the test process beside every other test's sockets (consoles, links, etcd
/// clients). A relay that shuts down or writes to a descriptor number it already closed acts on
/// whatever socket the process opened next under that number: a console's connection to a node then
/// ends in the middle of its handshake, in an unrelated test. These tests reuse the numbers on purpose.
@Suite("Test relays act only on their own sockets")
struct RelayDescriptorTests {
    /// Sixteen connected socket pairs opened now: they take the lowest free descriptor numbers,
    /// so the ones a relay just closed.
    static func socketPairs() throws -> [(Int32, Int32)] {
        try (0..<16).map { _ in
            var fds: [Int32] = [-1, -1]
            guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds) == 0 else { throw POSIXError(.EMFILE) }
            return (fds[0], fds[1])
        }
    }

    /// The ends among `pairs` that were shut down or closed (readable with an end of file or an error
    /// though nothing was written to them); closes every pair.
    static func damaged(_ pairs: [(Int32, Int32)]) -> [Int32] {
        defer { for (a, b) in pairs { close(a); close(b) } }
        var polled = pairs.flatMap { [pollfd(fd: $0.0, events: Int16(POLLIN), revents: 0), pollfd(fd: $0.1, events: Int16(POLLIN), revents: 0)] }
        _ = poll(&polled, nfds_t(polled.count), 0)
        return polled.filter { $0.revents != 0 }.map(\.fd)
    }

    /// Waits up to 10 s for the end of file on `fd` (the relay closed its side); true when it came.
    static func awaitEndOfFile(_ fd: Int32) -> Bool {
        var buffer = [UInt8](repeating: 0, count: 256)
        let deadline = ContinuousClock.now + .seconds(10)
        while ContinuousClock.now < deadline {
            var watched = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&watched, 1, 100) >= 0 || errno == EINTR else { return false }
            guard watched.revents != 0 else { continue }
            let count = read(fd, &buffer, buffer.count)
            if count == 0 { return true }
            if count < 0 && errno != EINTR && errno != EAGAIN { return false }
        }
        return false
    }

    /// A blocking Unix listener at `path`.
    static func unixListener(_ path: String) throws -> Int32 {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (index, byte) in path.utf8.enumerated() { raw[index] = byte }
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard fd >= 0, bound == 0, listen(fd, 4) == 0 else { throw POSIXError(.EADDRINUSE) }
        return fd
    }

    /// A `LoopbackRelay` to a listener of the test's in `folder`, and the target's end of one
    /// connection through it that its client closed: when this returns, the relay has closed both of
    /// its sockets of that connection. The caller closes `target` and `upstream`.
    static func endedLoopbackConnection(in folder: TestFolder) throws -> (relay: LoopbackRelay, target: Int32, upstream: Int32) {
        let target = try Self.unixListener(folder.path("t.sock"))
        let relay = try LoopbackRelay(routes: [(folder.path("r.sock"), folder.path("t.sock"))])
        let client = BadInputTests.connectUnix(folder.path("r.sock"))
        try #require(client >= 0)
        let upstream = accept(target, nil, nil)
        try #require(upstream >= 0)
        close(client)
        try #require(Self.awaitEndOfFile(upstream))
        return (relay, target, upstream)
    }

    @Test("LoopbackRelay: stopping it after a connection ended leaves alone the sockets that took that connection's descriptor numbers")
    func loopbackRelayStopAfterAnEnd() throws {
        let folder = try TestFolder()
        defer { folder.remove() }
        let (relay, target, upstream) = try Self.endedLoopbackConnection(in: folder)
        defer { close(target); close(upstream) }
        let pairs = try Self.socketPairs()
        relay.stop()
        #expect(Self.damaged(pairs).isEmpty, "the relay shut down sockets it had closed before, now someone else's")
    }

    @Test("LoopbackRelay: a restore after a connection ended, then a stop, leave other sockets alone")
    func loopbackRelayRestoreAfterAnEnd() throws {
        let folder = try TestFolder()
        defer { folder.remove() }
        let (relay, target, upstream) = try Self.endedLoopbackConnection(in: folder)
        defer { close(target); close(upstream) }
        let pairs = try Self.socketPairs()
        relay.restore()
        relay.stop()
        relay.stop()
        #expect(Self.damaged(pairs).isEmpty, "the relay shut down sockets it had closed before, now someone else's")
    }

    @Test("TCPRelay: stopping it and injecting after a connection ended leave other sockets alone")
    func tcpRelayAfterAnEnd() throws {
        let target = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(target) }
        var address = TCPRelay.loopback(port: 0)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(target, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        try #require(bound == 0 && listen(target, 4) == 0)
        var local = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &local) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(target, $0, &length) }
        }
        let relay = try TCPRelay(targetPort: UInt16(bigEndian: local.sin_port))
        let client = TCPRelay.dial(port: relay.port)
        try #require(client >= 0)
        let upstream = accept(target, nil, nil)
        try #require(upstream >= 0)
        defer { close(upstream) }
        close(client)
        try #require(Self.awaitEndOfFile(upstream))
        let pairs = try Self.socketPairs()
        #expect(relay.inject(Array("forged".utf8)) == 0)
        relay.stop()
        relay.stop()
        #expect(Self.damaged(pairs).isEmpty, "the relay wrote to or shut down sockets it had closed before")
    }
}
