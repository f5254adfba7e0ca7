import CordisControl

/// What the node decides by a command's kind: the role it needs, whether it changes entries, and
/// whether its refusal is audited.
///
/// Every request is parsed into a `ControlCommand` before it is authorised or run, so a command the
/// node does not know is refused as unknown before anything else, and a new command cannot be served
/// without a role: the switches below are exhaustive.
extension ControlCommand {

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
}
