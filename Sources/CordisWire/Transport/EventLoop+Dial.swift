import CCordisShim

#if canImport(Glibc)
import Glibc
#endif

extension EventLoop {
    /// Dials `address` and returns the connection once connected.
    ///
    /// A host name is resolved through the system resolver (blocking the calling task briefly).
    /// The handshake deadline of `limits` starts when this returns.
    ///
    /// With `tls`, a TCP connection runs TLS from its first byte (the client's first flight is sent at
    /// once; frames sent before the TLS handshake is over wait for it); a Unix socket ignores it.
    ///
    /// - Throws: `TransportError`: `connectionRefused` (nobody listens, or the Unix listener's backlog
    ///   is full), `connectTimeout`, `addressUnavailable`, `invalidAddress`, `systemError`, `tls` when
    ///   libssl cannot start a session.
    public func connect(
        to address: Address, limits: ConnectionLimits = ConnectionLimits(), tls: TLSContext? = nil
    ) async throws -> Connection {
        switch address {
        case .unix(let path):
            let fd = ccordis_stream_socket(AF_UNIX)
            guard fd >= 0 else { throw TransportError.system(.systemError, "cannot create a Unix socket") }
            guard ccordis_unix_connect(fd, path) == 0 else {
                let number = errno
                close(fd)
                switch number {
                case ECONNREFUSED, ENOENT:
                    throw TransportError(.connectionRefused, "nobody listens on \(address)", errno: number)
                case EAGAIN:
                    throw TransportError(.connectionRefused, "the listener on \(address) is not accepting (backlog full)", errno: number)
                case ENAMETOOLONG:
                    throw TransportError(.invalidAddress, "Unix socket path \(path) is too long")
                default:
                    throw TransportError(.addressUnavailable, "cannot connect to \(address)", errno: number)
                }
            }
            return try Connection(fd: fd, loop: self, limits: limits)
        case .tcp(let host, let port):
            let numeric = try Self.numericHost(host)
            let fd = ccordis_stream_socket(ccordis_numeric_family(numeric))
            guard fd >= 0 else { throw TransportError.system(.systemError, "cannot create a TCP socket") }
            let status = ccordis_inet_connect(fd, numeric, port)
            if status < 0 {
                let number = errno
                close(fd)
                if number == ECONNREFUSED {
                    throw TransportError(.connectionRefused, "nobody listens on \(address)", errno: number)
                }
                throw TransportError(.addressUnavailable, "cannot connect to \(address)", errno: number)
            }
            if status == 1 {
                do {
                    try await PendingDial(fd: fd, loop: self, target: address).wait(timeout: limits.connectTimeout)
                } catch {
                    close(fd)
                    throw error
                }
            }
            guard let tls else { return try Connection(fd: fd, loop: self, limits: limits) }
            let filter: TLSStreamFilter
            do {
                filter = try TLSStreamFilter(context: tls, side: .client)
            } catch {
                close(fd)
                throw TransportError(.tls, "cannot start TLS to \(address): \(error.message)")
            }
            let connection = try Connection(fd: fd, loop: self, limits: limits, streamFilter: filter)
            if let claim = try connection.stage(filter.firstFlight(), bypassLimit: true, raw: true) {
                connection.write(claim)
            }
            return connection
        }
    }
}
