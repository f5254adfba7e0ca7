import CordisWire

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
/// - **Control work is budgeted per link and per console identity**: running requests and follow
///   subscriptions (`mayRun`, `mayFollow`); a member, relaying for every console of its node, gets a
///   larger budget.
/// - **A console pays for what it leaves unread** (`delivery`): past `Limits.subscriberLag` bytes waiting
///   on its link its subscriptions end with a `lagged` event, past `Limits.consoleBacklog` its link is
///   closed. A member's link is bounded by the connection's own outbound limit only.
/// - **On a Unix socket only the node's own user and root are members** (`mayHoldNodeRole`): everyone
///   else the socket admits (its group, `--allow-uid`) connects as a console. Asked at the handshake,
///   off the node's actor, for the links it accepts, and by `admit` for every link (those it dials too:
///   a member's socket served by another user is not admitted).
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
        /// Requests one console link may have running; more are answered `busy`.
        var requestsPerLink = 64
        /// Requests all the links of one console identity may have running together.
        var requestsPerConsoleIdentity = 256
        /// Requests one member's link may have running (it relays for all the consoles of its node).
        var requestsPerMember = 1024
        /// Follow subscriptions one console link may hold.
        var followsPerLink = 16
        /// Follow subscriptions all the links of one console identity may hold together.
        var followsPerConsoleIdentity = 64
        /// Follow subscriptions one member's link may hold (one per operator it follows for).
        var followsPerMember = 256
        /// Bytes a console may leave unread before its event subscriptions end.
        var subscriberLag = 256 * 1024
        /// Bytes a console may leave unread before its link is closed.
        var consoleBacklog = 1024 * 1024

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
    /// The user the node runs as.
    let ownUID: UInt32
    /// Who holds each established link, by session.
    private(set) var holders: [Int: Holder] = [:]
    /// Links held per console identity.
    private(set) var consoleLinks: [String: Int] = [:]
    /// Control requests running, by session.
    private(set) var requestsRunning: [Int: Int] = [:]

    /// No links held yet, on a node run by `ownUID`.
    init(limits: Limits, ownUID: UInt32 = 0) {
        self.limits = limits
        self.ownUID = ownUID
    }

    /// Decides whether `holder` may hold the link of `session` (its peer's Unix socket served by
    /// `peerUID`, nil on TCP); an admitted one is counted until `release(session:)`.
    mutating func admit(session: Int, _ holder: Holder, peerUID: UInt32? = nil) -> Verdict {
        guard holders[session] == nil else { return .admit }
        if case .member = holder, let peerUID, !Self.mayHoldNodeRole(uid: peerUID, ownUID: ownUID) {
            return .refuse("its Unix socket is served by uid \(peerUID), neither this node's user nor root")
        }
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

    /// Which budget a link's control work counts against.
    enum Work: Sendable {
        /// A request being run.
        case request
        /// A follow subscription.
        case follow
    }

    /// Whether `session` may start one more piece of `work`, given how many its own link (`link`) and all
    /// the links of its console identity (`identity`, the same for a member) hold already.
    func may(_ work: Work, session: Int, link: Int, identity: Int) -> Verdict {
        let holder = holders[session]
        let perLink: Int
        let perIdentity: Int
        switch (work, holder) {
        case (.request, .member?): (perLink, perIdentity) = (limits.requestsPerMember, limits.requestsPerMember)
        case (.request, _): (perLink, perIdentity) = (limits.requestsPerLink, limits.requestsPerConsoleIdentity)
        case (.follow, .member?): (perLink, perIdentity) = (limits.followsPerMember, limits.followsPerMember)
        case (.follow, _): (perLink, perIdentity) = (limits.followsPerLink, limits.followsPerConsoleIdentity)
        }
        let what = work == .request ? "requests running" : "follow subscriptions"
        if link >= perLink { return .refuse("this link already has \(link) \(what), the most one link may") }
        if identity >= perIdentity, case .console(let name, _)? = holder {
            return .refuse("\(name) already has \(identity) \(what) over all its links, the most one identity may")
        }
        return .admit
    }

    /// The console identity holding `session`'s link (nil for a member or an unknown link).
    func consoleIdentity(of session: Int) -> String? {
        guard case .console(let identity, _)? = holders[session] else { return nil }
        return identity
    }

    /// What becomes of a message for `session` whose link holds `backlog` bytes not yet read by the peer.
    enum Delivery: Equatable, Sendable {
        /// Send it.
        case send
        /// An event: end the subscription it is for, telling the console why.
        case lag(String)
        /// Close the link, for this reason.
        case close(String)
    }

    /// Decides what a console that reads slowly or not at all is sent: events stop past
    /// `Limits.subscriberLag` bytes waiting, the link closes past `Limits.consoleBacklog`. Members'
    /// links always `send` (the connection's outbound limit bounds them).
    func delivery(to session: Int, backlog: Int, event: Bool) -> Delivery {
        guard case .console(let identity, _)? = holders[session] else { return .send }
        if backlog >= limits.consoleBacklog {
            return .close(
                "\(identity) is not reading: \(backlog) bytes wait to be sent, more than the \(limits.consoleBacklog) a console may leave unread")
        }
        if event, backlog >= limits.subscriberLag {
            return .lag("\(identity) fell behind: \(backlog) bytes wait to be sent, more than the \(limits.subscriberLag) a subscriber may leave unread")
        }
        return .send
    }

    /// A control request of `session` starts, if it may (`may(.request, …)` against the requests its link
    /// and its console identity run): then it counts until `finishRequest`.
    mutating func startRequest(session: Int) -> Verdict {
        let link = requestsRunning[session, default: 0]
        let identity = consoleIdentity(of: session).map { name in
            requestsRunning.reduce(0) { $0 + (consoleIdentity(of: $1.key) == name ? $1.value : 0) }
        } ?? link
        let verdict = may(.request, session: session, link: link, identity: identity)
        if verdict == .admit { requestsRunning[session] = link + 1 }
        return verdict
    }

    /// A control request of `session` finished (its link may have ended meanwhile).
    mutating func finishRequest(session: Int) {
        guard let running = requestsRunning[session] else { return }
        requestsRunning[session] = running > 1 ? running - 1 : nil
    }

    /// The link of `session` ended: its slot is free, and its requests no longer count.
    mutating func release(session: Int) {
        requestsRunning[session] = nil
        guard case .console(let identity, _)? = holders.removeValue(forKey: session) else { return }
        let held = consoleLinks[identity, default: 1] - 1
        consoleLinks[identity] = held > 0 ? held : nil
    }
}

extension Admission {
    /// Whether a peer with `credentials` (a Unix socket's; nil on TCP) may hold the node role on a node
    /// run by `ownUID`: only that user and root. On TCP the handshake decides (the cluster secret, TLS,
    /// or `--insecure`).
    static func mayHoldNodeRole(_ credentials: PeerCredentials?, ownUID: UInt32) -> Bool {
        guard let credentials else { return true }
        return mayHoldNodeRole(uid: credentials.uid, ownUID: ownUID)
    }

    /// Whether a peer whose Unix socket is served by `uid` may hold the node role on a node run by `ownUID`.
    static func mayHoldNodeRole(uid: UInt32, ownUID: UInt32) -> Bool {
        uid == ownUID || uid == 0
    }
}
