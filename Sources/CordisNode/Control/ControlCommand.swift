/// A command of the control API, with everything the node decides by its kind: the role it needs,
/// whether it changes entries, and whether its refusal is audited.
///
/// Every request is parsed into one before it is authorised or run, so a command the node does not
/// know is refused as unknown before anything else, and a new command cannot be served without a
/// role: the switches below are exhaustive.
enum ControlCommand: String, CaseIterable, Sendable {
    case status, members, catalog, interfaces, subscribe, unsubscribe, traffic
    case enable, disable, config, add, remove, move, restart, call
    case forget, apply

    /// The least role that may run it.
    var requiredRole: OperatorRole {
        switch self {
        case .status, .members, .catalog, .interfaces, .subscribe, .unsubscribe, .traffic: return .viewer
        case .enable, .disable, .config, .add, .remove, .move, .restart, .call: return .operator
        case .forget, .apply: return .admin
        }
    }

    /// Whether it changes the node (its entries or its view of the members) and so is audited.
    var isChange: Bool {
        switch self {
        case .status, .members, .catalog, .interfaces, .subscribe, .unsubscribe, .traffic, .call: return false
        case .enable, .disable, .config, .add, .remove, .move, .restart, .forget, .apply: return true
        }
    }

    /// Whether it changes entries without a signed tree (refused under `--require-signed-trees`).
    var isUnsignedChange: Bool {
        switch self {
        case .enable, .disable, .config, .add, .remove, .move, .restart: return true
        case .status, .members, .catalog, .interfaces, .subscribe, .unsubscribe, .traffic, .call, .forget, .apply: return false
        }
    }

    /// Whether a refusal while running it is audited by the common path (`apply` audits both of its
    /// outcomes itself).
    var isAuditedOnRefusal: Bool { isChange && self != .apply }

    /// The command's name as an operator typed it (`subscribe` is `events`).
    var spoken: String {
        switch self {
        case .subscribe, .unsubscribe: return "events"
        default: return rawValue
        }
    }
}
