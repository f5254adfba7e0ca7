import CordisProcessTesting
import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A loopback TCP relay the test controls, like the fault tests' `LoopbackRelay` but on TCP (TLS runs
/// on TCP links only): it listens on 127.0.0.1 (a port the kernel picks) and forwards each connection
/// to `targetPort`, byte for byte, on threads of its own. It records every byte it forwards, either
/// way, and `inject(_:)` writes bytes of the test's into every live connection toward the target.
final class TCPRelay: Sendable {
    private struct State {
        var recorded: [UInt8] = []
        var connections = 0
    }

    private let state = Mutex(State())
    /// The listener and forwarded pairs, closed only there.
    private let sockets = RelaySockets()
    /// The port the relay listens on.
    let port: UInt16

    /// `tcp:127.0.0.1:PORT` of the relay.
    var address: String { "tcp:127.0.0.1:\(port)" }

    init(targetPort: UInt16) throws {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard listener >= 0 else { throw POSIXError(.EMFILE) }
        var address = Self.loopback(port: 0)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(listener, 64) == 0 else {
            close(listener)
            throw POSIXError(.EADDRINUSE)
        }
        var local = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &local) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &length) }
        }
        self.port = UInt16(bigEndian: local.sin_port)
        sockets.addListener(listener)
        let thread = Thread { [self] in acceptLoop(listener, targetPort: targetPort) }
        thread.start()
    }

    /// Every byte forwarded so far, both ways, in the order the relay saw them.
    var recorded: [UInt8] { state.withLock { $0.recorded } }

    /// How many connections the relay forwarded so far.
    var connections: Int { state.withLock { $0.connections } }

    /// Whether `text` appears in the recorded bytes.
    func recorded(contains text: String) -> Bool {
        RelayBytes.contains(recorded[...], Array(text.utf8))
    }

    /// Writes `bytes` into every live connection, toward the target; returns how many got them.
    @discardableResult
    func inject(_ bytes: [UInt8]) -> Int {
        sockets.injectUpstream(bytes)
    }

    /// Stops the relay and closes everything. Idempotent.
    func stop() {
        sockets.stopAll()
    }

    static func loopback(port: UInt16) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        return address
    }

    /// A loopback port nobody listens on (a dial to it is refused): below the ephemeral range, so no
    /// other test's port-0 listener can come to hold it, and handed out to no other test.
    static func unusedPort() -> UInt16 {
        (try? LoopbackPorts.free(1).first) ?? 9
    }

    /// A socket connected to 127.0.0.1:`port`, or -1.
    static func dial(port: UInt16) -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return -1 }
        var address = loopback(port: port)
        let status = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        if status != 0 {
            close(fd)
            return -1
        }
        return fd
    }

    private func acceptLoop(_ listener: Int32, targetPort: UInt16) {
        while true {
            let client = accept(listener, nil, nil)
            if client < 0 {
                if errno == EINTR { continue }
                break
            }
            let upstream = sockets.stopped ? -1 : Self.dial(port: targetPort)
            guard upstream >= 0 else {
                close(client)
                if sockets.stopped { break }
                continue
            }
            let pair = RelaySockets.Pair(client: client, upstream: upstream)
            guard sockets.add(pair) else { break }
            state.withLock { $0.connections += 1 }
            let pump = Thread { [self] in pumpLoop(pair) }
            pump.start()
        }
        sockets.closeListener(listener)
    }

    /// Copies bytes both ways until either end closes, recording them.
    private func pumpLoop(_ pair: RelaySockets.Pair) {
        defer { sockets.release(pair) }
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        var fds = [pollfd(fd: pair.client, events: Int16(POLLIN), revents: 0), pollfd(fd: pair.upstream, events: Int16(POLLIN), revents: 0)]
        loop: while !sockets.stopped {
            let ready = poll(&fds, 2, 100)
            if ready < 0 && errno != EINTR { break }
            if ready <= 0 { continue }
            for index in 0..<2 where fds[index].revents != 0 {
                let forwarded = RelayBytes.forwardChunk(from: fds[index].fd, to: fds[1 - index].fd, buffer: &buffer) { chunk in
                    state.withLock { $0.recorded += chunk }
                }
                if forwarded == nil { break loop }
            }
        }
    }
}
