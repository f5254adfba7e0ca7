/// Who may hold an established link, decided per identity as well as per connection: one value the node
/// asks when a handshake completes and tells when a link ends.
///
/// Its rules:
/// - **Every link counts** against the node's connection budget (`Limits.total`, from its descriptor
///   limit); none is admitted past it.
/// - **A console identity holds at most `Limits.perConsoleIdentity` links** (a user, an operator
///   certificate's name, `cluster`): an admitted console of any role cannot take every slot by opening
///   links and pinging them.
/// - **The last `Limits.reserve` slots are for members and admins**: a viewer or an operator, however many
///   identities it has, cannot keep a member or an admin out.
///
/// It owns no sockets: the node closes a refused link with the reason given.
struct Admission {
    /// Who holds a link.
    enum Holder: Hashable, Sendable {
        /// A member of the cluster.
        case member(String)
        /// A console, by its operator identity's name and its role (nil without an operators file).
        case console(identity: String, role: OperatorRole?)
    }

    /// The bounds.
    struct Limits: Equatable, Sendable {
        /// Links the node holds at most (its connection budget).
        var total: Int
        /// Links one console identity holds at most.
        var perConsoleIdentity: Int
        /// Slots kept for members and admins.
        var reserve: Int

        /// The bounds of a node whose connection budget is `total`: 64 links per console identity (at
        /// most a quarter of the budget) and a reserve of an eighth of the budget, at most 64.
        init(total: Int, perConsoleIdentity: Int? = nil, reserve: Int? = nil) {
            self.total = max(1, total)
            self.perConsoleIdentity = max(1, perConsoleIdentity ?? min(64, max(1, total / 4)))
            self.reserve = max(0, min(reserve ?? min(64, total / 8), self.total - 1))
        }
    }

    /// Whether a link may be held.
    enum Verdict: Equatable, Sendable {
        /// It may.
        case admit
        /// It may not, and why (for the peer and the log).
        case refuse(String)
    }

    /// The bounds in force.
    let limits: Limits
    /// Who holds each established link, by session.
    private(set) var holders: [Int: Holder] = [:]
    /// Links held per console identity.
    private(set) var consoleLinks: [String: Int] = [:]

    /// No links held yet.
    init(limits: Limits) {
        self.limits = limits
    }

    /// Decides whether `holder` may hold the link of `session`; an admitted one is counted until
    /// `release(session:)`.
    mutating func admit(session: Int, _ holder: Holder) -> Verdict {
        guard holders[session] == nil else { return .admit }
        guard holders.count < limits.total else {
            return .refuse("this node holds \(limits.total) links, its limit")
        }
        if case .console(let identity, let role) = holder {
            let held = consoleLinks[identity, default: 0]
            guard held < limits.perConsoleIdentity else {
                return .refuse("\(identity) already holds \(held) console links, the most one identity may")
            }
            guard role == .admin || holders.count < limits.total - limits.reserve else {
                return .refuse("the last \(limits.reserve) of this node's \(limits.total) links are kept for members and admins")
            }
            consoleLinks[identity] = held + 1
        }
        holders[session] = holder
        return .admit
    }

    /// The link of `session` ended: its slot is free.
    mutating func release(session: Int) {
        guard case .console(let identity, _)? = holders.removeValue(forKey: session) else { return }
        let held = consoleLinks[identity, default: 1] - 1
        consoleLinks[identity] = held > 0 ? held : nil
    }
}
