import CCordisShim

#if canImport(Glibc)
import Glibc
#endif

extension EventLoop {
    /// Binds and listens on `address`.
    ///
    /// A Unix socket file is created with `options.socketMode` and `options.socketGroup`. A file left
    /// at the path by a process that no longer listens (a connect attempt is refused) is removed and
    /// the bind retried; when a process still listens there, or the path is not a socket, this throws
    /// `addressInUse`. For TCP, port 0 picks a free port: read the listener's `address`.
    ///
    /// - Throws: `TransportError`: `addressInUse`, `addressUnavailable` (permissions, missing folder,
    ///   unknown host), `invalidAddress`, `systemError`.
    public func listen(on address: Address, options: ListenerOptions = ListenerOptions()) throws -> Listener {
        switch address {
        case .unix(let path): return try listenUnix(path: path, options: options)
        case .tcp(let host, let port): return try listenTCP(host: host, port: port, options: options)
        }
    }

    /// Takes over an already-listening socket (socket activation), telling Unix from TCP by its
    /// address. The descriptor is made non-blocking and owned by the listener from then on. The socket
    /// is shared with whoever passed it (systemd keeps its own copy): the listener's `close()` closes
    /// this descriptor only, so the socket keeps listening for the next process that takes it over.
    ///
    /// - Throws: `TransportError` `notListening` when `fd` is not a listening stream socket.
    public func adoptListener(fd: Int32, options: ListenerOptions = ListenerOptions()) throws -> Listener {
        guard ccordis_is_listening_stream(fd) == 1 else {
            throw TransportError(.notListening, "file descriptor \(fd) is not a listening stream socket")
        }
        guard let address = Address.ofSocket(fd, peer: false) else {
            throw TransportError(.notListening, "file descriptor \(fd) has no Unix or TCP address")
        }
        guard ccordis_set_nonblocking(fd) == 0 else {
            throw TransportError.system(.systemError, "cannot make file descriptor \(fd) non-blocking")
        }
        return try Listener(fd: fd, address: address, loop: self, options: options, createdPath: nil, shared: true)
    }

    private func listenUnix(path: String, options: ListenerOptions) throws -> Listener {
        let fd = ccordis_stream_socket(AF_UNIX)
        guard fd >= 0 else { throw TransportError.system(.systemError, "cannot create a Unix socket") }
        do {
            try bindUnix(fd: fd, path: path)
            if chmod(path, mode_t(options.socketMode)) != 0 {
                throw TransportError.system(.addressUnavailable, "cannot set the mode of socket file \(path)")
            }
            if let group = options.socketGroup, chown(path, uid_t.max, gid_t(group)) != 0 {
                throw TransportError.system(.addressUnavailable, "cannot give socket file \(path) group \(group)")
            }
            guard Glibc.listen(fd, options.backlog) == 0 else {
                throw TransportError.system(.systemError, "cannot listen on unix:\(path)")
            }
            return try Listener(fd: fd, address: .unix(path: path), loop: self, options: options, createdPath: path, shared: false)
        } catch let error as TransportError {
            if error.code != .addressInUse { unlinkIfSocket(path, bound: fd) }
            close(fd)
            throw error
        }
    }

    /// Binds, reclaiming a stale socket file once.
    private func bindUnix(fd: Int32, path: String) throws {
        for attempt in 0..<2 {
            if ccordis_unix_bind(fd, path) == 0 { return }
            let number = errno
            switch number {
            case EADDRINUSE:
                guard attempt == 0 else { break }
                var info = stat()
                guard lstat(path, &info) == 0 else { continue }  // vanished meanwhile: bind again
                guard info.st_mode & S_IFMT == S_IFSOCK else {
                    throw TransportError(
                        .addressInUse, "unix:\(path) exists and is not a socket; remove it or choose another path")
                }
                guard Self.nobodyListens(at: path) else {
                    throw TransportError(.addressInUse, "another process already listens on unix:\(path)")
                }
                unlink(path)
                report(TransportEvent(
                    .staleSocketReclaimed, "removed stale socket file \(path) (nobody listened on it)"))
                continue
            case ENAMETOOLONG:
                throw TransportError(.invalidAddress, "Unix socket path \(path) is too long")
            default:
                throw TransportError.system(.addressUnavailable, "cannot bind unix:\(path)", errno: number)
            }
        }
        throw TransportError(.addressInUse, "another process already listens on unix:\(path)")
    }

    /// True when connecting to `path` is refused: no process listens on that socket file.
    private static func nobodyListens(at path: String) -> Bool {
        let probe = ccordis_stream_socket(AF_UNIX)
        guard probe >= 0 else { return false }
        defer { close(probe) }
        if ccordis_unix_connect(probe, path) == 0 { return false }
        return errno == ECONNREFUSED
    }

    /// Removes the socket file bound by `fd` after a failure between bind and listen.
    private func unlinkIfSocket(_ path: String, bound fd: Int32) {
        guard case .unix(let boundPath)? = Address.ofSocket(fd, peer: false), boundPath == path else { return }
        unlink(path)
    }

    private func listenTCP(host: String, port: UInt16, options: ListenerOptions) throws -> Listener {
        let (fd, bound) = try bindTCP(host: host, port: port, backlog: options.backlog)
        do {
            return try Listener(fd: fd, address: bound, loop: self, options: options, createdPath: nil, shared: false)
        } catch {
            close(fd)
            throw error
        }
    }

    /// A TCP socket bound to `host`:`port` (port 0 picks one) and listening, with the address bound.
    ///
    /// - Throws: `TransportError`: `addressInUse`, `addressUnavailable`, `invalidAddress`, `systemError`.
    func bindTCP(host: String, port: UInt16, backlog: Int32) throws -> (fd: Int32, address: Address) {
        let numeric = try Self.numericHost(host)
        let family = ccordis_numeric_family(numeric)
        let fd = ccordis_stream_socket(family)
        guard fd >= 0 else { throw TransportError.system(.systemError, "cannot create a TCP socket") }
        let shown = Address.tcp(host: host, port: port)
        guard ccordis_inet_bind(fd, numeric, port) == 0 else {
            let number = errno
            close(fd)
            if number == EADDRINUSE {
                throw TransportError(.addressInUse, "another process already listens on \(shown)", errno: number)
            }
            throw TransportError.system(.addressUnavailable, "cannot bind \(shown)", errno: number)
        }
        guard Glibc.listen(fd, backlog) == 0 else {
            let error = TransportError.system(.systemError, "cannot listen on \(shown)")
            close(fd)
            throw error
        }
        return (fd, Address.ofSocket(fd, peer: false) ?? shown)
    }

    /// `host` as a numeric address, resolving a name (blocking, through the system resolver).
    package static func numericHost(_ host: String) throws -> String {
        if ccordis_numeric_family(host) != 0 { return host }
        var buffer = [CChar](repeating: 0, count: 64)
        let status = buffer.withUnsafeMutableBufferPointer { ccordis_resolve(host, $0.baseAddress, $0.count) }
        guard status == 0 else {
            throw TransportError(.addressUnavailable, "cannot resolve host \"\(host)\"")
        }
        return buffer.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
    }
}
