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
        var stopped = false
        var pairs: [(client: Int32, upstream: Int32)] = []
        var recorded: [UInt8] = []
        var connections = 0
    }

    private let state = Mutex(State())
    private let listener: Int32
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
        self.listener = listener
        self.port = UInt16(bigEndian: local.sin_port)
        let thread = Thread { [self] in acceptLoop(targetPort: targetPort) }
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
        let upstreams = state.withLock { $0.pairs.map(\.upstream) }
        var count = 0
        for fd in upstreams {
            let written = bytes.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if written == bytes.count { count += 1 }
        }
        return count
    }

    /// Stops the relay and closes everything.
    func stop() {
        let pairs = state.withLock { state -> [(client: Int32, upstream: Int32)] in
            state.stopped = true
            defer { state.pairs.removeAll() }
            return state.pairs
        }
        shutdown(listener, Int32(SHUT_RDWR))
        for pair in pairs {
            shutdown(pair.client, Int32(SHUT_RDWR))
            shutdown(pair.upstream, Int32(SHUT_RDWR))
        }
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

    private func acceptLoop(targetPort: UInt16) {
        while true {
            let client = accept(listener, nil, nil)
            if client < 0 {
                if errno == EINTR { continue }
                break
            }
            if state.withLock({ $0.stopped }) {
                close(client)
                break
            }
            let upstream = Self.dial(port: targetPort)
            guard upstream >= 0 else {
                close(client)
                continue
            }
            state.withLock {
                $0.pairs.append((client, upstream))
                $0.connections += 1
            }
            let pump = Thread { [self] in pumpLoop(client, upstream) }
            pump.start()
        }
        close(listener)
    }

    /// Copies bytes both ways until either end closes, recording them.
    private func pumpLoop(_ a: Int32, _ b: Int32) {
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        var fds = [pollfd(fd: a, events: Int16(POLLIN), revents: 0), pollfd(fd: b, events: Int16(POLLIN), revents: 0)]
        loop: while !state.withLock({ $0.stopped }) {
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
        state.withLock { state in state.pairs.removeAll { $0.client == a } }
        close(a)
        close(b)
    }
}
