/// The group that owns a node's Unix sockets (`--socket-group`): a group name or a numeric group id.
///
/// A name is kept as written and resolved when the node starts, so a group that does not exist is a
/// start-up failure, not a usage error. Digits alone are read as a group id.
public enum SocketGroup: Sendable, Hashable, CustomStringConvertible {
    /// A group named in the group database (`/etc/group`).
    case name(String)
    /// A numeric group id.
    case id(UInt32)

    /// The group as it is written on the command line.
    public var description: String {
        switch self {
        case .name(let name): return name
        case .id(let id): return String(id)
        }
    }
}
