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
        try await connect(to: address, limits: limits, tls: tls, framing: .frames)
    }

    /// `connect(to:limits:tls:)` with the connection's `framing` (`.raw` for a plain byte stream).
    func connect(
        to address: Address, limits: ConnectionLimits, tls: TLSContext? = nil, framing: Connection.Framing
    ) async throws -> Connection {
        try await withCheckedThrowingContinuation { continuation in
            dial(to: address, limits: limits, tls: tls, framing: framing) { continuation.resume(with: $0) }
        }
    }

    /// Dials `address` and calls `completion` once with the connection or the error (those of
    /// `connect(to:limits:tls:)`): on the loop thread the moment a TCP connect that had to wait completes,
    /// otherwise on the caller's thread before this returns. What the completion sends goes out at once,
    /// whether or not the task that dialled has a thread to run on.
    package func dial(
        to address: Address, limits: ConnectionLimits = ConnectionLimits(), tls: TLSContext? = nil,
        framing: Connection.Framing = .frames, completion: @escaping @Sendable (Result<Connection, any Error>) -> Void
    ) {
        switch address {
        case .unix(let path):
            let fd = ccordis_stream_socket(AF_UNIX)
            guard fd >= 0 else { return completion(.failure(TransportError.system(.systemError, "cannot create a Unix socket"))) }
            guard ccordis_unix_connect(fd, path) == 0 else {
                let number = errno
                close(fd)
                let error = switch number {
                case ECONNREFUSED, ENOENT:
                    TransportError(.connectionRefused, "nobody listens on \(address)", errno: number)
                case EAGAIN:
                    TransportError(.connectionRefused, "the listener on \(address) is not accepting (backlog full)", errno: number)
                case ENAMETOOLONG:
                    TransportError(.invalidAddress, "Unix socket path \(path) is too long")
                default:
                    TransportError(.addressUnavailable, "cannot connect to \(address)", errno: number)
                }
                return completion(.failure(error))
            }
            completion(Result { try Connection(fd: fd, loop: self, limits: limits, framing: framing) })
        case .tcp(let host, let port):
            let numeric: String
            do {
                numeric = try Self.numericHost(host)
            } catch {
                return completion(.failure(error))
            }
            let fd = ccordis_stream_socket(ccordis_numeric_family(numeric))
            guard fd >= 0 else { return completion(.failure(TransportError.system(.systemError, "cannot create a TCP socket"))) }
            let status = ccordis_inet_connect(fd, numeric, port)
            if status < 0 {
                let number = errno
                close(fd)
                if number == ECONNREFUSED {
                    return completion(.failure(TransportError(.connectionRefused, "nobody listens on \(address)", errno: number)))
                }
                return completion(.failure(TransportError(.addressUnavailable, "cannot connect to \(address)", errno: number)))
            }
            guard status == 1 else {
                return completion(Result { try connected(fd, to: address, limits: limits, tls: tls, framing: framing) })
            }
            PendingDial(fd: fd, loop: self, target: address).start(timeout: limits.connectTimeout) { [self] outcome in
                switch outcome {
                case .success:
                    completion(Result { try connected(fd, to: address, limits: limits, tls: tls, framing: framing) })
                case .failure(let error):
                    close(fd)
                    completion(.failure(error))
                }
            }
        }
    }

    /// The connection on the connected TCP socket `fd`; with `tls`, the TLS client's first flight is sent.
    private func connected(
        _ fd: Int32, to address: Address, limits: ConnectionLimits, tls: TLSContext?, framing: Connection.Framing
    ) throws -> Connection {
        guard let tls else { return try Connection(fd: fd, loop: self, limits: limits, framing: framing) }
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
