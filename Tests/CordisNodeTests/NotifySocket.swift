import CordisProcessTesting
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A datagram socket bound in a fresh temporary folder, standing in for systemd's notification socket.
final class NotifySocket {
    let folder: String
    let path: String
    let fd: Int32

    struct SetupError: Error, CustomStringConvertible {
        let description: String
    }

    init() throws {
        var template = Array("/tmp/cordis-notify-XXXXXX".utf8CString)
        guard let made = template.withUnsafeMutableBufferPointer({ $0.baseAddress.flatMap { mkdtemp($0) } }) else {
            throw SetupError(description: "mkdtemp failed: errno \(errno)")
        }
        folder = String(cString: made)
        path = folder + "/notify.sock"
        fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw SetupError(description: "socket failed: errno \(errno)") }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        let pathBytes = Array(path.utf8)
        guard pathBytes.count < capacity else { throw SetupError(description: "path too long: \(path)") }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: pathBytes)
            raw[pathBytes.count] = 0
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard bound == 0 else { throw SetupError(description: "bind \(path) failed: errno \(errno)") }
    }

    /// The next datagram, waiting at most `milliseconds` (on a thread of its own, not the pool); nil when
    /// none arrived in time.
    func receive(timeout milliseconds: Int32 = 5_000) async -> String? {
        let fd = self.fd
        return await onOwnThread {
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, milliseconds) == 1 else { return nil }
            var buffer = [UInt8](repeating: 0, count: 4096)
            let count = recv(fd, &buffer, buffer.count, Int32(MSG_DONTWAIT))
            guard count >= 0 else { return nil }
            return String(decoding: buffer[..<count], as: UTF8.self)
        }
    }

    /// Whether a datagram is waiting right now.
    func hasPending() -> Bool {
        var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        return poll(&poller, 1, 0) == 1
    }

    deinit {
        close(fd)
        unlink(path)
        rmdir(folder)
    }
}
