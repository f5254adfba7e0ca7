import CCordisShim

#if canImport(Glibc)
import Glibc
#endif

extension Address {
    /// The local (`peer == false`) or remote address of a socket, or nil when it has none (an
    /// unnamed Unix peer) or is not a socket.
    static func ofSocket(_ fd: Int32, peer: Bool) -> Address? {
        var buffer = [CChar](repeating: 0, count: 160)
        let family = buffer.withUnsafeMutableBufferPointer {
            ccordis_socket_address(fd, peer ? 1 : 0, $0.baseAddress, $0.count)
        }
        guard family >= 0 else { return nil }
        let text = buffer.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        if text == "unix:" { return nil }
        return try? Address(parsing: text)
    }

    /// True when `fd` is a Unix-domain socket (named or not).
    static func isUnixSocket(_ fd: Int32) -> Bool {
        var buffer = [CChar](repeating: 0, count: 160)
        let family = buffer.withUnsafeMutableBufferPointer { ccordis_socket_address(fd, 0, $0.baseAddress, $0.count) }
        return family == AF_UNIX
    }
}
