import CordisJSON
import CordisProcessTesting
import CordisWire
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A hand-driven peer on a node's Unix socket, connected as any user the test picks (the kernel's
/// peer credentials are those of the process that called `connect`: a forked child that switched
/// to that user), then spoken to with blocking reads and writes, each call on a thread of its own (never
/// on Swift's cooperative pool, see `onOwnThread`): the handshake with any role and name, then any
/// message. Unchecked `Sendable`: a test awaits each call before the next, so they never overlap.
final class RawUnixPeer: @unchecked Sendable {
    private let fd: Int32
    private var decoder = FrameDecoder(maxFrameSize: Handshake.maxFrameSize)
    private var codec = SessionCodec(keys: nil)

    /// Connects to the socket at `path` as user `uid` (the group stays the test's own), or throws.
    init(path: String, uid: uid_t) throws {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw RawPeerError("socket: errno \(errno)") }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else {
            close(fd)
            throw RawPeerError("socket path too long: \(path)")
        }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (index, byte) in bytes.enumerated() { raw[index] = byte }
        }
        // The child shares the socket: its `connect` is the one the node's SO_PEERCRED sees.
        let child = fork()
        if child == 0 {
            guard uid == getuid() || setuid(uid) == 0 else { _exit(2) }
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
                }
            }
            _exit(connected == 0 ? 0 : 1)
        }
        guard child > 0 else {
            close(fd)
            throw RawPeerError("fork: errno \(errno)")
        }
        var status: Int32 = 0
        while waitpid(child, &status, 0) < 0 && errno == EINTR {}
        guard (status & 0x7f) == 0, (status >> 8) & 0xff == 0 else {
            close(fd)
            throw RawPeerError("the child could not connect as uid \(uid) (status \(status))")
        }
        var limit = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        self.fd = fd
    }

    deinit { close(fd) }

    /// Runs the unauthenticated handshake as `role` named `name`; returns the node's identity, or
    /// throws the refusal.
    func handshake(role: PeerRole, name: String) async throws -> PeerIdentity {
        try await onOwnThread { Result { try self.blockingHandshake(role: role, name: name) } }.get()
    }

    private func blockingHandshake(role: PeerRole, name: String) throws -> PeerIdentity {
        let identity = PeerIdentity(role: role, name: name, incarnation: UUID().uuidString.lowercased())
        var handshake = try Handshake(side: .initiator, configuration: HandshakeConfiguration(identity: identity, secrets: nil))
        try send(handshake.start())
        while true {
            let step = handshake.receive(try nextFrame())
            try send(step.messages)
            switch step {
            case .proceed: continue
            case .established(_, let result):
                decoder.maxFrameSize = Frame.defaultMaxSize
                return result.peer
            case .failed(_, let error): throw error
            }
        }
    }

    /// Sends messages.
    func send(_ messages: [WireMessage]) throws {
        var buffer: [UInt8] = []
        for message in messages { try codec.append(message, to: &buffer) }
        var offset = 0
        while offset < buffer.count {
            let written = buffer.withUnsafeBytes { Glibc.send(fd, $0.baseAddress! + offset, buffer.count - offset, Int32(MSG_NOSIGNAL)) }
            guard written > 0 else { throw RawPeerError("send: errno \(errno)") }
            offset += written
        }
    }

    /// Sends `request` and returns the node's response to it (pings and withdrawals are answered, other
    /// messages skipped), or throws
    /// when the link closes or nothing comes within 10 s.
    func ask(_ request: ControlRequest) async throws -> ControlResponse {
        try await onOwnThread { Result { try self.blockingAsk(request) } }.get()
    }

    private func blockingAsk(_ request: ControlRequest) throws -> ControlResponse {
        try send([.request(request)])
        while true {
            // Answered as a member would, so the node does not wait on it (a withdrawal waits for
            // its acknowledgement) or take it for gone.
            switch try codec.decode(try nextFrame()) {
            case .response(let response) where response.id == request.id && !response.more: return response
            case .ping(let id): try send([.pong(id: id)])
            case .withdraw(let provider): try send([.withdrawAck(provider)])
            default: continue
            }
        }
    }

    private func nextFrame() throws -> Frame {
        while true {
            if let frame = try decoder.next() { return frame }
            var chunk = [UInt8](repeating: 0, count: 65536)
            let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            guard count > 0 else { throw RawPeerError(count == 0 ? "the node closed the link" : "recv: errno \(errno)") }
            decoder.feed(chunk[..<count])
        }
    }
}

/// A raw peer's failure.
struct RawPeerError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
