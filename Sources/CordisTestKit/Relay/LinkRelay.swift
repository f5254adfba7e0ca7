import CCordisShim
import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The kit's relay in front of one node: it listens on the address the node advertises and the other
/// nodes dial, and forwards each connection, byte for byte, to the node's own address. It tells which
/// node dialled (the peer's process id: `SO_PEERCRED` on a Unix socket, `/proc/net/tcp` and the nodes'
/// descriptors on TCP), so `LinkFaults` can cut or delay the link between two given nodes and leave
/// the others alone. No root, no network namespace: only connections that pass through the relay can
/// be faulted (the kit's own console links go to the node directly).
///
/// Threads of its own: one accepts, one per connection forwards (polling every 50 ms for a changed
/// rule). Sockets are closed only under `lock`, so no number the relay closed is touched again.
final class LinkRelay: Sendable {
    /// The address the node advertises (`unix:PATH` or `tcp:127.0.0.1:PORT`).
    let address: String
    /// The node behind the relay.
    let owner: String
    private let listener: Int32
    private let isUnix: Bool
    private let faults: LinkFaults
    private let identify: @Sendable (pid_t) -> String?
    private let state = Mutex(State())

    private struct State {
        var target: String?
        var stopped = false
        var open: Set<Int32> = []
    }

    /// Listens on `path` (a Unix socket) or, when nil, on a free loopback TCP port. `identify` names the
    /// node a process id belongs to (nil: not a node of the cluster, its link is never faulted).
    init(owner: String, unixPath path: String?, faults: LinkFaults, identify: @escaping @Sendable (pid_t) -> String?) throws {
        self.owner = owner
        self.faults = faults
        self.identify = identify
        isUnix = path != nil
        let fd: Int32
        if let path {
            fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            guard fd >= 0 else { throw POSIXError(.EMFILE) }
            guard Self.withUnixAddress(path, { bind(fd, $0, $1) }) == 0, listen(fd, 64) == 0 else {
                close(fd)
                throw TestKitError(.invalidArgument, "the relay of \(owner) cannot listen on \(path)")
            }
            address = "unix:" + path
        } else {
            fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            guard fd >= 0 else { throw POSIXError(.EMFILE) }
            var bound = Self.loopback(port: 0)
            let size = socklen_t(MemoryLayout<sockaddr_in>.size)
            var length = size
            guard withUnsafePointer(to: &bound, { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, size) } }) == 0,
                  listen(fd, 64) == 0,
                  withUnsafeMutablePointer(to: &bound, { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) } }) == 0
            else {
                close(fd)
                throw TestKitError(.invalidArgument, "the relay of \(owner) cannot listen on a loopback port")
            }
            address = "tcp:127.0.0.1:\(UInt16(bigEndian: bound.sin_port))"
        }
        listener = fd
        let thread = Thread { [self] in acceptLoop() }
        thread.name = "relay-accept"
        thread.start()
    }

    /// Forwards new connections to `address` (the node's own, once it listens; again after a restart).
    func forward(to address: String) { state.withLock { $0.target = address } }

    /// Stops accepting and closes every connection.
    func stop() {
        state.withLock { state in
            guard !state.stopped else { return }
            state.stopped = true
            // Wakes the blocked accept; the loop closes the listener.
            shutdown(listener, Int32(SHUT_RDWR))
            for fd in state.open { shutdown(fd, Int32(SHUT_RDWR)) }
        }
    }

    private func acceptLoop() {
        while true {
            let client = ccordis_accept(listener)
            if client < 0 {
                if errno == EINTR { continue }
                break
            }
            // Accepted non-blocking; the pumps write with blocking sends.
            _ = fcntl(client, F_SETFL, fcntl(client, F_GETFL) & ~O_NONBLOCK)
            let (stopped, target) = state.withLock { ($0.stopped, $0.target) }
            guard !stopped, let target, let upstream = connectUpstream(target) else {
                close(client)
                if stopped { break }
                continue
            }
            let dialer = dialerProcesses(client)
            let admitted = state.withLock { state -> Bool in
                guard !state.stopped else { return false }
                state.open.insert(client)
                state.open.insert(upstream)
                return true
            }
            guard admitted else {
                close(client)
                close(upstream)
                break
            }
            let pump = Thread { [self] in pumpLoop(client: client, upstream: upstream, dialer: dialer) }
            pump.name = "relay-pump"
            pump.start()
        }
        state.withLock { _ in _ = close(listener) }
    }

    /// Copies bytes both ways until either end closes; holds them while the link is cut, closes both
    /// ends when it is healed, waits before each chunk while it is delayed.
    private func pumpLoop(client: Int32, upstream: Int32, dialer processes: [pid_t]) {
        defer {
            state.withLock { state in
                state.open.remove(client)
                state.open.remove(upstream)
                close(client)
                close(upstream)
            }
        }
        // A node dials as it starts, before the cluster lists it: its name is looked up until it is known.
        var dialer: String?
        var heals = 0
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        var fds = [pollfd(fd: client, events: Int16(POLLIN), revents: 0), pollfd(fd: upstream, events: Int16(POLLIN), revents: 0)]
        while !state.withLock({ $0.stopped }) {
            if dialer == nil, let name = processes.lazy.compactMap(identify).first {
                dialer = name
                heals = faults.heals(name, owner)
            }
            let rule = dialer.flatMap { faults.rule($0, owner) }
            // A connection that lived through a cut ends at the heal: both nodes see a lost link.
            if let dialer, faults.heals(dialer, owner) != heals { return }
            let cut = rule == .cut
            for index in 0..<2 { fds[index].events = cut ? 0 : Int16(POLLIN) }
            let ready = poll(&fds, 2, 50)
            if ready < 0 && errno != EINTR { return }
            if cut {
                // An end that closed during the cut is let go (never polled again); the other learns of
                // it at the heal, when the connection ends.
                for index in 0..<2 where fds[index].fd >= 0 && fds[index].revents != 0 { fds[index].fd = -1 }
                if fds[0].fd < 0 && fds[1].fd < 0 { return }
                continue
            }
            if fds[0].fd < 0 || fds[1].fd < 0 { return }
            if ready <= 0 { continue }
            // Bytes that arrived after a cut was set are held back, even when the poll began before it.
            if let dialer, faults.rule(dialer, owner) == .cut { continue }
            for index in 0..<2 where fds[index].revents != 0 {
                let count = read(fds[index].fd, &buffer, buffer.count)
                guard count > 0 else { return }
                if case .delay(let duration) = rule {
                    let (seconds, attoseconds) = duration.components
                    usleep(useconds_t(max(0, seconds * 1_000_000 + attoseconds / 1_000_000_000_000)))
                }
                var offset = 0
                while offset < count {
                    let written = buffer.withUnsafeBytes { raw -> Int in
                        guard let base = raw.baseAddress else { return -1 }
                        return send(fds[1 - index].fd, base + offset, count - offset, Int32(MSG_NOSIGNAL))
                    }
                    guard written > 0 else { return }
                    offset += written
                }
            }
        }
    }

    /// A blocking connection to the node's address, nil when it does not answer.
    private func connectUpstream(_ target: String) -> Int32? {
        if target.hasPrefix("unix:") {
            let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            guard fd >= 0 else { return nil }
            guard Self.withUnixAddress(String(target.dropFirst(5)), { connect(fd, $0, $1) }) == 0 else {
                close(fd)
                return nil
            }
            return fd
        }
        guard target.hasPrefix("tcp:"), let colon = target.lastIndex(of: ":"), let port = UInt16(target[target.index(after: colon)...])
        else { return nil }
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return nil }
        var address = Self.loopback(port: port)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else {
            close(fd)
            return nil
        }
        _ = ccordis_set_no_delay(fd)
        return fd
    }

    /// The processes that may have dialled the connection `fd` (the one on a Unix socket; those holding
    /// the other end on TCP), empty when that cannot be told.
    private func dialerProcesses(_ fd: Int32) -> [pid_t] {
        if isUnix {
            var uid: UInt32 = 0, gid: UInt32 = 0, pid: Int32 = 0
            guard ccordis_peer_credentials(fd, &uid, &gid, &pid) == 0 else { return [] }
            return [pid]
        }
        _ = ccordis_set_no_delay(fd)
        var peer = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        guard withUnsafeMutablePointer(to: &peer, { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getpeername(fd, $0, &length) } }) == 0
        else { return [] }
        guard let inode = Self.socketInode(localPort: UInt16(bigEndian: peer.sin_port)) else { return [] }
        return Self.processes(holding: inode)
    }

    /// The inode of the loopback TCP socket whose local port is `port` (the dialer's end), from `/proc/net/tcp`.
    private static func socketInode(localPort port: UInt16) -> String? {
        // Read to its end: a /proc table comes a page per read, and a one-shot read can stop at the first.
        guard let handle = FileHandle(forReadingAtPath: "/proc/net/tcp") else { return nil }
        defer { try? handle.close() }
        let table = String(decoding: handle.readDataToEndOfFile(), as: UTF8.self)
        let hex = String(port, radix: 16, uppercase: true)
        let wanted = "0100007F:" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
        for line in table.split(separator: "\n").dropFirst() {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard fields.count > 9, fields[1] == wanted else { continue }
            return String(fields[9])
        }
        return nil
    }

    /// The processes holding socket `inode` open (searched among this user's processes in `/proc`).
    private static func processes(holding inode: String) -> [pid_t] {
        let link = "socket:[\(inode)]"
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        var found: [pid_t] = []
        for entry in entries {
            guard let pid = pid_t(entry) else { continue }
            let folder = "/proc/\(entry)/fd"
            guard let descriptors = try? FileManager.default.contentsOfDirectory(atPath: folder) else { continue }
            if descriptors.contains(where: { (try? FileManager.default.destinationOfSymbolicLink(atPath: "\(folder)/\($0)")) == link }) {
                found.append(pid)
            }
        }
        return found
    }

    private static func loopback(port: UInt16) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return address
    }

    private static func withUnixAddress(_ path: String, _ body: (UnsafePointer<sockaddr>, socklen_t) -> Int32) -> Int32 {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { return -1 }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (index, byte) in bytes.enumerated() { raw[index] = byte }
            raw[bytes.count] = 0
        }
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
    }
}
