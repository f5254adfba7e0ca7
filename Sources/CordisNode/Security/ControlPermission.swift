import CordisControl
import CordisWire

/// Who may run which control request, and which console may call a service: the operators' rules,
/// decided in one place from what the node knows of the request (its command, the operator it runs for
/// and that operator's role in this node's operators file, who sent it).
///
/// - A member's own request (one it relays for no operator) only reads: a change, or anything needing
///   more than the viewer role, runs only for an operator.
/// - An operator not listed in this node's operators file runs nothing; a listed one runs what its role
///   allows (viewer < operator < admin; `ControlCommand.requiredRole`).
/// - Under `--require-signed-trees`, a change to entries that comes without a signed tree is refused
///   where it would run.
/// - A console calls a service only with the operator role or above.
/// - With an operators file, a console it does not list is not admitted at all (refused at the handshake).
enum ControlPermission {
    /// Whether a console whose role in this node's operators file is `role` (nil: not listed) may link,
    /// `operatorsFile` saying whether the node has one: without one every console links (and runs what
    /// the node's other rules allow), with one only a listed console does.
    static func admitsConsole(role: OperatorRole?, operatorsFile: Bool) -> Bool {
        !operatorsFile || role != nil
    }

    /// Why a request is refused, and whether the refusal is audited.
    struct Refusal: Equatable, Sendable {
        /// What the requester is told (the error `forbidden`).
        var message: String
        /// Whether the refusal goes to the audit log (a refused change is audited).
        var audited: Bool
    }

    /// Why `command`, sent by `peer` (a member when `peerRole` is `.node`) for `requester` (nil: the
    /// member's own request, or a console without an identity), is refused on `node`; nil when it may run.
    /// `role` is the requester's role in this node's operators file (nil: not listed); `runsHere` says
    /// the request runs on this node rather than being relayed; `signedTreesOnly` is
    /// `--require-signed-trees`.
    static func refusal(
        of command: ControlCommand, on node: String, requester: OperatorIdentity?, role: OperatorRole?, from peer: String,
        peerRole: PeerRole, runsHere: Bool, signedTreesOnly: Bool
    ) -> Refusal? {
        let needed = command.requiredRole
        if requester == nil, peerRole == .node, needed > .viewer {
            return Refusal(
                message: "the request of member \(peer) carries no operator: \(node) runs \(command.spoken) only for an operator",
                audited: command.isChange)
        }
        if let requester {
            guard let role else {
                return Refusal(message: "\(requester.name) is not listed in the operators file of \(node)", audited: command.isChange)
            }
            guard role >= needed else {
                return Refusal(message: "\(command.spoken) needs the \(needed) role; you are \(role)", audited: command.isChange)
            }
        }
        if runsHere, signedTreesOnly, command.isUnsignedChange {
            return Refusal(
                message: "\(node) accepts only signed trees (--require-signed-trees): \(command.rawValue) is refused; apply a signed tree instead",
                audited: true)
        }
        return nil
    }

    /// Why a console's call for `requester` (whose role in this node's operators file is `role`) is
    /// refused on `node`; nil when it may call.
    static func callRefusal(on node: String, requester: OperatorIdentity?, role: OperatorRole?) -> String? {
        guard let role else { return "\(requester?.name ?? "this console") is not listed in the operators file of \(node)" }
        return role >= .operator ? nil : "call needs the operator role; you are \(role)"
    }
}
