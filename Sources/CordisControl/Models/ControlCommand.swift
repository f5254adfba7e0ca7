import CordisJSON
import CordisWire

/// A command of the control API, as consoles send it and nodes serve it: one typed name on both sides.
/// On the wire it is the `command` string of a `request` message (`rawValue`); a node answers a name it
/// does not know with the error `unknown-command`.
public enum ControlCommand: String, CaseIterable, Sendable {
    /// The node's status (`cluster`: every member's, through the node reached).
    case status
    /// The members the node knows, with their health.
    case members
    /// The plugins the node can run, with their config fields and services.
    case catalog
    /// The services the node can share, with their remote interfaces and methods.
    case interfaces
    /// Follow or read the node's events (and the cluster's).
    case subscribe
    /// End an event subscription.
    case unsubscribe
    /// Message counts per kind and peer.
    case traffic
    /// Enable an entry.
    case enable
    /// Disable an entry.
    case disable
    /// Replace an entry's config.
    case config
    /// Add an entry.
    case add
    /// Remove an entry.
    case remove
    /// Move an entry into a group, or to the top level.
    case move
    /// Restart an entry's fiber.
    case restart
    /// Call a method of a service.
    case call
    /// Forget a member that is down.
    case forget
    /// Apply a signed entry tree.
    case apply

    /// The command's name as an operator types it (`subscribe` and `unsubscribe` are `events`).
    public var spoken: String {
        switch self {
        case .subscribe, .unsubscribe: return "events"
        default: return rawValue
        }
    }
}

extension ControlRequest {
    /// A request for `command` (its wire name).
    public init(
        id: Int, command: ControlCommand, node: String? = nil, args: JSONObject = JSONObject(), timeout: Double? = nil,
        operator: RequestOperator? = nil
    ) {
        self.init(id: id, command: command.rawValue, node: node, args: args, timeout: timeout, operator: `operator`)
    }
}
