/// A socket systemd passed to the node at start (socket activation): its descriptor and its name.
///
/// The descriptor is still open and owned by the process; hand it to
/// `EventLoop.adoptListener(fd:options:)`, which tells Unix from TCP by the socket's address.
public struct ActivatedSocket: Sendable, Hashable, CustomStringConvertible {
    /// The file descriptor, 3 for the first socket passed.
    public let fd: Int32
    /// The name from `LISTEN_FDNAMES` (a socket unit's `FileDescriptorName=`), or nil when systemd
    /// gave no names or an empty one.
    public let name: String?

    /// Creates a description of a passed socket.
    public init(fd: Int32, name: String?) {
        self.fd = fd
        self.name = name
    }

    /// `fd 3 (name)`.
    public var description: String {
        guard let name else { return "fd \(fd)" }
        return "fd \(fd) (\(name))"
    }
}
