/// Who follows this node's events, and the subscriptions this node holds to other members for them.
///
/// - A **subscriber** is a link's `subscribe` with `follow`: its session, the request's id (which its
///   events carry), whether it wants the other members' events too (`cluster`: consoles only), one
///   member's only (`on`), and the operator it follows for.
/// - For the cluster-wide subscribers of each operator, this node **follows every member whose link is in
///   use**: one subscription per member and operator, made when the member links or when the first such
///   subscriber comes, ended when the last one goes.
/// - A member's subscriptions **follow its link in use**. When another link takes over, they are made again
///   on it. When the member waits for a replacement link or is lost, they are dropped (the member ends
///   them with the link) until it links again.
/// - A link's subscribers end with it, or when they are unsubscribed or lag behind.
/// - An event a member sends counts only for a subscription this node holds to it (`follows`), and reaches
///   the cluster-wide subscribers of that subscription's operator only: an operator never sees what was
///   followed for another (`recipients`). A subscriber with `on` gets that member's events only.
/// - Only a console subscribes cluster-wide (`NodeState.followsCluster`): a member's subscription is to
///   this node's own events, so members never make each other follow the cluster.
///
/// The ids of the subscriptions to members come from the node's one numbering of its requests to members
/// (`newRequestID`), so an answer finds its request.
struct Subscriptions: Sendable {
    /// A link's subscription.
    struct Subscriber: Equatable, Sendable {
        /// The session of the link.
        var session: Int
        /// The `subscribe` request's id, which its events carry.
        var id: Int
        /// Whether it wants the other members' events too.
        var cluster: Bool
        /// Only events of this member.
        var on: String?
        /// The operator it follows for (nil: a member's own subscription).
        var `operator`: OperatorIdentity?
    }

    /// A subscription to a member's events, for the cluster-wide subscribers of one operator.
    struct Upstream: Hashable, Sendable {
        /// The member followed.
        var member: String
        /// The operator followed for (nil: cluster-wide subscribers without one).
        var `operator`: OperatorIdentity?
    }

    /// What happens to the subscriptions.
    enum Event: Equatable, Sendable {
        /// A link subscribed; `linked` are the members whose link is in use.
        case subscribed(Subscriber, linked: [String])
        /// A link unsubscribed subscription `id` (nil: all of its).
        case unsubscribed(session: Int, id: Int?)
        /// Every subscription of `session` ends (its link closed, or it lags behind).
        case ended(session: Int)
        /// `member` has a link in use now (a new one, or another that took over).
        case memberLinked(String)
        /// `member` has no link in use now.
        case memberUnlinked(String)
    }

    /// What the node must do.
    enum Directive: Equatable, Sendable {
        /// Subscribe to `member`'s events as `id`, for `operator`, on its link in use.
        case follow(member: String, id: Int, operator: OperatorIdentity?)
        /// End subscription `id` to `member`'s events, on its link in use, with the request `request`.
        case unfollow(member: String, id: Int, request: Int)
    }

    /// The subscribers, in the order they subscribed.
    private(set) var subscribers: [Subscriber] = []
    /// The subscriptions to members, with the id of each.
    private(set) var followed: [Upstream: Int] = [:]
    /// The last id given to a request to a member.
    private(set) var lastRequestID = 0

    /// A new id for a request to a member (a relayed request, a subscription).
    mutating func newRequestID() -> Int {
        lastRequestID += 1
        return lastRequestID
    }

    /// Takes one event; returns the directives, in order.
    mutating func receive(_ event: Event) -> [Directive] {
        switch event {
        case .subscribed(let subscriber, let linked):
            subscribers.append(subscriber)
            guard subscriber.cluster else { return [] }
            return linked.sorted().compactMap { follow($0, for: subscriber.operator) }
        case .unsubscribed(let session, let id):
            subscribers.removeAll { $0.session == session && (id == nil || $0.id == id) }
            return endUnused()
        case .ended(let session):
            subscribers.removeAll { $0.session == session }
            return endUnused()
        case .memberLinked(let member):
            followed = followed.filter { $0.key.member != member }
            return operatorsFollowing.compactMap { follow(member, for: $0) }
        case .memberUnlinked(let member):
            followed = followed.filter { $0.key.member != member }
            return []
        }
    }

    /// The subscribers an event of `node` reaches, in the order they subscribed: this node's own event
    /// (`upstream` nil) every subscriber; a member's, which the subscription `upstream` brought, the
    /// cluster-wide subscribers of its operator. Those that follow one member (`on`) get its events only.
    func recipients(ofEventOn node: String, upstream: Upstream?) -> [Subscriber] {
        subscribers.filter { subscriber in
            guard subscriber.on == nil || subscriber.on == node else { return false }
            guard let upstream else { return true }
            return subscriber.cluster && subscriber.operator == upstream.operator
        }
    }

    /// The subscription to `member` for `operator` whose id is `id`, if this node holds it.
    func follows(_ member: String, id: Int) -> Upstream? {
        followed.first { $0.key.member == member && $0.value == id }?.key
    }

    /// The operators with a cluster-wide subscriber, in a stable order.
    private var operatorsFollowing: [OperatorIdentity?] {
        var seen: [OperatorIdentity?] = []
        for subscriber in subscribers where subscriber.cluster && !seen.contains(subscriber.operator) {
            seen.append(subscriber.operator)
        }
        return seen
    }

    /// Follows `member` for `operator`, unless this node does already.
    private mutating func follow(_ member: String, for operator: OperatorIdentity?) -> Directive? {
        let upstream = Upstream(member: member, operator: `operator`)
        guard followed[upstream] == nil else { return nil }
        let id = newRequestID()
        followed[upstream] = id
        return .follow(member: member, id: id, operator: `operator`)
    }

    /// Ends each subscription to a member once no cluster-wide subscriber of its operator is left.
    private mutating func endUnused() -> [Directive] {
        let following = operatorsFollowing
        var directives: [Directive] = []
        for (upstream, id) in followed.sorted(by: { $0.value < $1.value }) where !following.contains(upstream.operator) {
            followed[upstream] = nil
            directives.append(.unfollow(member: upstream.member, id: id, request: newRequestID()))
        }
        return directives
    }
}
