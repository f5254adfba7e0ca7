import CCordisShim

/// Who is at the other end of a Unix socket, as the kernel reports it (`SO_PEERCRED`,
/// `SO_PEERGROUPS`): taken when the peer connected, so it cannot be forged by the peer.
public struct PeerCredentials: Hashable, Sendable, CustomStringConvertible {
    /// The peer's effective user id.
    public var uid: UInt32
    /// The peer's effective group id.
    public var gid: UInt32
    /// The peer's process id.
    public var pid: Int32
    /// The peer's supplementary groups (empty when the kernel does not report them).
    public var groups: [UInt32]

    /// Creates credentials (tests; the transport reads them from the socket).
    package init(uid: UInt32, gid: UInt32, pid: Int32, groups: [UInt32] = []) {
        self.uid = uid
        self.gid = gid
        self.pid = pid
        self.groups = groups
    }

    /// `uid=… gid=… pid=…`.
    public var description: String { "uid=\(uid) gid=\(gid) pid=\(pid)" }

    /// Reads the credentials of the peer of the Unix socket `fd`, or nil when it is not one.
    static func read(from fd: Int32) -> PeerCredentials? {
        var uid: UInt32 = 0
        var gid: UInt32 = 0
        var pid: Int32 = 0
        guard ccordis_peer_credentials(fd, &uid, &gid, &pid) == 0 else { return nil }
        var groups = [UInt32](repeating: 0, count: 64)
        let count = groups.withUnsafeMutableBufferPointer {
            ccordis_peer_groups(fd, $0.baseAddress, Int32($0.count))
        }
        groups.removeSubrange(max(0, Int(count))...)
        return PeerCredentials(uid: uid, gid: gid, pid: pid, groups: groups)
    }
}
