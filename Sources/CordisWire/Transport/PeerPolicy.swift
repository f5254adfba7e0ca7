#if canImport(Glibc)
import Glibc
#endif

/// Which Unix-socket peers a listener accepts: its own user, root, members of a group, and
/// explicitly allowed user ids (`--allow-uid`).
///
/// The listener applies it right after `accept`, before reading anything: a refused peer is closed
/// and reported as a `TransportEvent` of kind `peerRefused`. TCP peers are not checked here (they
/// authenticate in the handshake).
public struct PeerPolicy: Sendable, Hashable {
    /// The user id that is always accepted (the node's own, by default).
    public var ownUID: UInt32
    /// Whether root (uid 0) is accepted.
    public var allowsRoot: Bool
    /// A group whose members are accepted (the socket's group), matched against the peer's primary
    /// and supplementary groups.
    public var group: UInt32?
    /// Further user ids accepted.
    public var allowedUIDs: Set<UInt32>

    /// Creates a policy; the defaults accept this process's user, root, and the given group.
    public init(
        ownUID: UInt32 = getuid(), allowsRoot: Bool = true, group: UInt32? = getgid(), allowedUIDs: Set<UInt32> = []
    ) {
        self.ownUID = ownUID
        self.allowsRoot = allowsRoot
        self.group = group
        self.allowedUIDs = allowedUIDs
    }

    /// A policy that accepts everyone (tests, or sockets protected by other means).
    public static let everyone = PeerPolicy(ownUID: 0, allowsRoot: true, group: nil, allowedUIDs: [], acceptsAll: true)

    private var acceptsAll = false

    private init(ownUID: UInt32, allowsRoot: Bool, group: UInt32?, allowedUIDs: Set<UInt32>, acceptsAll: Bool) {
        self.init(ownUID: ownUID, allowsRoot: allowsRoot, group: group, allowedUIDs: allowedUIDs)
        self.acceptsAll = acceptsAll
    }

    /// Whether a peer with these credentials is accepted.
    public func permits(_ peer: PeerCredentials) -> Bool {
        if acceptsAll { return true }
        if peer.uid == ownUID { return true }
        if allowsRoot && peer.uid == 0 { return true }
        if allowedUIDs.contains(peer.uid) { return true }
        if let group, peer.gid == group || peer.groups.contains(group) { return true }
        return false
    }
}
