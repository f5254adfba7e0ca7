/// What an operator may do on a node, from least to most: `viewer` reads, `operator` also changes
/// entries and calls services, `admin` also forgets members and applies signed trees.
public enum OperatorRole: String, Sendable, Hashable, Comparable, CaseIterable, CustomStringConvertible {
    /// Reads: status, graph, watch, events, catalog, members.
    case viewer
    /// Also enables, disables, configures, adds and removes entries, and calls services.
    case `operator`
    /// Also forgets members and applies signed trees.
    case admin

    private var rank: Int {
        switch self {
        case .viewer: return 0
        case .operator: return 1
        case .admin: return 2
        }
    }

    public static func < (lhs: OperatorRole, rhs: OperatorRole) -> Bool { lhs.rank < rhs.rank }

    /// `viewer`, `operator` or `admin`.
    public var description: String { rawValue }

    /// The role a control command needs, or nil for a command the node does not know (it is refused
    /// as unknown).
    public static func required(for command: String) -> OperatorRole? {
        switch command {
        case "status", "members", "catalog", "subscribe", "unsubscribe", "traffic": return .viewer
        case "enable", "disable", "config", "add", "remove", "call": return .operator
        case "forget", "apply": return .admin
        default: return nil
        }
    }

    /// The command's name as an operator typed it (`subscribe` is `events`).
    static func spoken(_ command: String) -> String {
        switch command {
        case "subscribe", "unsubscribe": return "events"
        default: return command
        }
    }
}
