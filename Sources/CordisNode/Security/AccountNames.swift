#if canImport(Glibc)
import Glibc
#endif

/// The user and group names an operators file lists (`user:NAME`, `group:NAME`), resolved to their
/// ids when the file is read (at start and on SIGHUP). A Unix peer is then matched by the numbers of
/// its credentials alone: admitting it at the handshake, on the event loop, never waits for the user
/// database (a slow directory service would stall every link).
///
/// A name that does not resolve matches no one until the file is read again.
public struct AccountNames: Sendable, Hashable {
    /// The uid of each listed user name.
    public var users: [String: UInt32]
    /// The gid of each listed group name.
    public var groups: [String: UInt32]

    /// Names already resolved (tests, or none).
    public init(users: [String: UInt32] = [:], groups: [String: UInt32] = [:]) {
        self.users = users
        self.groups = groups
    }

    /// Resolves the `user:` and `group:` identities among `identities` through the user and group
    /// databases (thread-safe lookups); the others are ignored.
    public init(resolving identities: some Sequence<String>) {
        self.init()
        for identity in identities {
            if identity.hasPrefix("user:") {
                let name = String(identity.dropFirst(5))
                if let uid = AccountDatabase.userID(named: name) { users[name] = uid }
            } else if identity.hasPrefix("group:") {
                let name = String(identity.dropFirst(6))
                if let gid = AccountDatabase.groupID(named: name) { groups[name] = gid }
            }
        }
    }

    /// The listed user names of `uid`, sorted.
    public func userNames(of uid: UInt32) -> [String] { users.filter { $0.value == uid }.map(\.key).sorted() }

    /// The listed group names of `gid`, sorted.
    public func groupNames(of gid: UInt32) -> [String] { groups.filter { $0.value == gid }.map(\.key).sorted() }
}
