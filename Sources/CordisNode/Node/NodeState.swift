import CordisDiscovery
import CordisWire

/// The node's one brain: every cluster decision, as a value that takes events and answers with the
/// directives the node carries out, in order.
///
/// It composes the machines, each with its own rules stated at its top: `Membership` (which link stands
/// for a member), the `MemberDiscovery` (the embedded mesh's `MeshGossip` or etcd's `EtcdDirectory`: how
/// members are found and when a life is over), `Exports` (what this node shares, and its withdrawals: a
/// shared provider's teardown is held from the start, until its withdrawal ends), `Proxies` (what the
/// others share, here), `Admission` (who may hold a link), `Dials` (which addresses are dialled, and
/// when), `Subscriptions` (who follows events, and the members followed for them) and, in etcd mode,
/// `IdleLinks` (which links close as idle), `ServiceKeys` (the service keys under the lease) and
/// `LeaseRule` (what the lease's renewals come to). What joins them is decided here, once:
/// - **A member linked** (a new life in use): the discovery learns it, then the exports are announced to
///   it, then calls that waited for the member's replacement link go on. A link that takes over (a
///   standby, or the other link of a duplicate) gets the members and the exports again, and the
///   withdrawals the member has not acknowledged, and withdraws nothing; the link in use it replaces, when
///   that one closed or went silent, is retired (its calls and relays fail); one the member closed as a
///   duplicate is drained instead (what was sent on it is answered).
/// - **A member's link ended**: the member is lost (its calls fail); the discovery says whether its life is
///   over (then its proxies go); withdrawals stop waiting for it. A link both sides closed as idle (etcd
///   mode) ended in order, not as a failure; so do the member links closed when etcd mode registers this
///   node again as a new incarnation (`reregistered`).
/// - **A silent link** (heartbeats missed) that stands for a member ends like a close (a standby takes
///   over, else the member is lost); any other (a console's, a drained duplicate) closes, deciding nothing.
/// - **Duplicates are drained**, never cut (`drain`): for at most a call's timeout and a handshake's; a
///   member whose link in use was closed as a duplicate waits a handshake's timeout for the other link
///   (`schedule`), and calls to it wait with it (`linkChoice`).
/// - **Idle links** (etcd mode): a sweep closes each member's link in use that carried no call for the
///   idle timeout and has no work in flight (`closeIdle`); a lost member's last use is forgotten.
/// - **Service keys and the lease** (etcd mode): a withdrawal is told once its key is deleted (at its
///   deadline if that comes first); a lease thought lost tells withdrawals at once; a registration under a
///   new lease leaves no key; a member life etcd no longer lists closes every link of it.
/// - **Who may send what**: a console sends requests, calls and cancels only; a drained duplicate link is
///   served for what was sent before it was drained; a member announces and withdraws only its own
///   providers and acknowledges only this node's; a link that stands for no member sends nothing that counts.
/// - **Goodbyes**: `duplicate` (protocol 1.4, or a 1.3 reason starting with `duplicate:`) drains the link;
///   `idle` ends it in order; `leaving` drops the member from the view.
/// - **Dials and waiting calls**: an address the mesh keeps dialled waits while a link to its member is in
///   use, and is dialled again when that link ends; what waits for a link to a member (a call, a relay)
///   goes on once a link is in use, or once none is on its way (no replacement awaited, no dial on demand).
/// - **Event subscriptions to members** go on the member's link in use: made again on a link that takes
///   over, dropped while a replacement is awaited or the member is lost; a member followed is busy for
///   the idle sweep.
/// - **A member's health** (`memberHealth`) is decided here, once, for every view: linked and heard
///   from is `up`, silent `suspected`; a member whose link ended after it said goodbye on it (no other
///   link of that life took over), or whose etcd registration said it was stopping, is `stopped`; any
///   other that is not linked is `down` (in etcd mode, one registered whose link did not fail is `up`);
///   a forgotten one `left`. Members stay listed down or stopped (in etcd mode too, once their
///   registration ended) until they come back or are forgotten.
/// - **Membership events**: each reading of the members' health is compared with the last one; what
///   changed is published once (`memberHealthChanged`).
/// - **Forgotten members** stay out of the view (`members`, the cluster's status) until one links again.
///   An operator forgets only a member not linked, never this node; the request is passed on to every
///   member whose link is in use (unless another member passed it on).
///
/// - **Who may hold a link** is `Admission`'s: every link counts against the node's budget, a console
///   identity holds a bounded share, the last slots are kept for members and admins, and on a Unix socket
///   only this node's user and root are members.
///
/// Time arrives inside events (a deadline passed, a replacement overdue, an idle sweep); it owns no clock,
/// task or socket, so every rule is tested in process with scripted and seeded random sequences.
///
/// Where new rules go: a control command or event that changes the cluster's view is an `Event` case
/// here and its effect a `Directive`; further budgets per identity join `Admission`, which counts the
/// requests running itself (`startRequest`) and judges the subscriptions `Subscriptions` holds
/// (`mayFollow`), fed by `established` and the sessions' ends.
struct NodeState {
    /// Who is on the other end of a link.
    enum Role: Equatable, Sendable {
        /// A member of the cluster.
        case node
        /// A console.
        case console
    }

    /// What happens, in the order it happens on the node's actor.
    enum Event: Equatable, Sendable {
        /// The node is up.
        case started
        /// A handshake completed on the link of `session`: may `holder` hold it? `peerUID` is the user
        /// serving the peer's Unix socket (nil on TCP).
        case established(session: Int, holder: Admission.Holder, peerUID: UInt32? = nil)
        /// A link event (a handshake completed, a link closed, whichever it was, heartbeats missed, a
        /// replacement overdue).
        case link(Membership.Event)
        /// The link of `session`, to `peer`, missed its heartbeats: a member's is lost; any other (a
        /// console's, a drained duplicate) closes and decides nothing more.
        case silent(session: Int, peer: String)
        /// etcd mode registered this node again at `at`, as a new incarnation (its lease was lost): every
        /// link to a member closes with `reason`, those that stand for a member in order (the peers take the
        /// close for the end of the old life, this side not for a failure of theirs); then what the new
        /// lease means follows (`lease(.registered(at:))`), so nothing is shared as the new life before the
        /// old life's links are closed.
        case reregistered(at: ContinuousClock.Instant, reason: String)
        /// The periodic sweep of idle links (etcd mode) at `now`: the members whose link has work in
        /// flight (calls either way, a console's relay) are `busy`; so is a member whose events this node
        /// follows.
        case idleSweep(at: ContinuousClock.Instant, busy: Set<String>)
        /// A message arrived on a link.
        case received(WireMessage, session: Int, role: Role)
        /// Nothing sent on the drained link of `session` waits for an answer any more, and nothing the member
        /// sent on it is being served.
        case drainedIdle(session: Int)
        /// What etcd listed or changed (etcd mode).
        case directory(DiscoveryEvent)
        /// The local providers changed, a withdrawal's deadline passed, or the node is stopping.
        case exports(Exports.Event)
        /// What etcd answered of the service keys, or a reason to bring them in line (etcd mode).
        case keys(ServiceKeys.Event)
        /// What a renewal of the lease came to, or a registration under a new lease (etcd mode).
        case lease(LeaseRule.Event)
        /// Dial attempt `attempt`, of `address`, reached `member` (its handshake is done): the node holds the
        /// link until it is told to take it or close it.
        case dialled(attempt: Int, address: String, member: String)
        /// Dial attempt `attempt` ended: its link was taken as `session` (nil: the dial failed, or its link
        /// was closed or refused); `random` in 0...1 for the jitter of a backoff.
        case dialEnded(attempt: Int, session: Int?, random: Double)
        /// The backoff after dial attempt `attempt` of the kept `address` is over.
        case dialDue(address: String, attempt: Int)
        /// The re-dial of `member` numbered `token` is due (etcd mode).
        case redialDue(member: String, token: Int)
        /// A call or relay needs a link to `member`, which has none and none on its way (etcd mode opens
        /// one; `linkChoice` said `open`).
        case linkWanted(member: String)
        /// An operator asked to forget a member: on this node (`relayed`: another member passed the request
        /// on), or here and on every member linked.
        case forgotten(name: String, relayed: Bool = false)
        /// A link subscribed to events (`follow`).
        case subscribed(Subscriptions.Subscriber)
        /// The link of `session` unsubscribed subscription `id` (nil: all of its).
        case unsubscribed(session: Int, id: Int?)
        /// Every subscription of the link of `session` ends: it lags behind (its link stays open).
        case subscriptionsLagged(session: Int)
        /// The members' health as read now (`MemberHealth.reading`, at every heartbeat interval).
        case healthRead([String: MemberHealth])
        /// The proxy disposal `id` finished (its consumers unloaded).
        case proxyDisposed(Int)
        /// What the node reports of a proxy directive (it could not create one).
        case proxies(Proxies.Event)
    }

    /// What the node must do.
    enum Directive: Equatable, Sendable {
        /// A link directive of `Membership` (other than the loss of a member, `memberLost`, and the drains,
        /// `drain`), or a `close` of `NodeState`'s own (a silent link of no member, re-registration).
        case link(Membership.Directive)
        /// The member's link in use (`link`, when one was in use until now) is gone: its calls fail, its
        /// relays end; `inOrder` when it closed as idle (both sides said so) rather than failed.
        case memberLost(member: String, incarnation: String, link: Int?, inOrder: Bool)
        /// The link of `session` no longer stands for its member, which another link now stands for: the
        /// calls and relays it carried fail (the member is not lost).
        case retired(session: Int)
        /// Drain the link of `session`, a duplicate of `member`'s: send nothing new on it, answer what the
        /// member still sends on it, report `drainedIdle` once nothing on it is in flight; say `goodbye`
        /// first when given (this side closes it as the duplicate, and the member closes it; else this side
        /// closes it once idle); close it at the latest after `deadline` (a call's timeout and a handshake's).
        case drain(session: Int, member: String, goodbye: String?, deadline: Duration)
        /// Report `event` after `delay` (a replacement link overdue).
        case schedule(Event, after: Duration)
        /// Close the link of `session`, `member`'s link in use, as idle (etcd mode): `goodbye` says `idle`.
        case closeIdle(session: Int, member: String)
        /// A directive of the discovery (dial, stop dialling, send members, a member gone from etcd, re-dial).
        case discovery(DiscoveryDirective)
        /// Send, hold, arm or cancel a deadline, or release, as `Exports` decided. In etcd mode a withdrawal
        /// is sent once its key is deleted (`keys`), or when its deadline passes first.
        case exports(Exports.Directive)
        /// Put or delete a service key in etcd, as `ServiceKeys` decided (etcd mode).
        case keys(ServiceKeys.Directive)
        /// Degrade, withdraw or share the exports again, register again, recover, as `LeaseRule` decided
        /// (etcd mode); what it means for the service keys is done already.
        case lease(LeaseRule.Directive)
        /// Create or dispose a proxy, or acknowledge a withdrawal, as `Proxies` decided (an acknowledgement
        /// names the session to send it on: the link the withdrawal came by while it still stands for the
        /// member, else the member's link in use).
        case proxies(Proxies.Directive)
        /// What waits for a link to `member` (calls, relays) goes on with the link in use now, or fails
        /// without one: a link is in use, or none is on its way any more.
        case linkSettled(member: String)
        /// Dial `address` once, as attempt `attempt`: report `dialled` once its handshake names the peer,
        /// or `dialEnded` when it fails.
        case dial(attempt: Int, address: String)
        /// Take the link of dial attempt `attempt` to the node's links (`established`, then the handshake's
        /// `link` event), then report `dialEnded`.
        case adoptDialled(attempt: Int)
        /// Close the link of dial attempt `attempt` without taking it, saying `goodbye`, then report
        /// `dialEnded`; `reason` is why (logged). In etcd mode the goodbye is `idle`: the node reached (it
        /// took the link for one to this node) closes it in order, not as a failure it would dial again.
        case discardDialled(attempt: Int, reason: String, goodbye: String)
        /// The member is not forgotten, for `reason` (the node itself, a member linked, or one asked here and
        /// unknown); nothing changed.
        case forgetRefused(member: String, reason: String)
        /// The member is forgotten; it had `addresses`. Pass the request on to the members on the links
        /// `tell` (the links in use; none when the request was passed on to this node).
        case forgot(member: String, addresses: [String], tell: [Int])
        /// Subscribe to the events of the member on the link of `session` as `id`, for `operator`
        /// (`Subscriptions`: the member's link in use).
        case followEvents(session: Int, id: Int, operator: OperatorIdentity?)
        /// End subscription `id` to the events of the member on the link of `session`, with the request
        /// `request`.
        case unfollowEvents(session: Int, id: Int, request: Int)
        /// A member's health changed since the last reading: publish it as a `member` event.
        case memberHealthChanged(MemberHealth.Change)
        /// Close the link of `session`, just established: its holder may not hold it, for `reason`.
        case notAdmitted(session: Int, reason: String)
        /// Serve a message the shell handles itself (a call, cancel, request, response or event) from the
        /// link of `session`.
        case serve(WireMessage, session: Int)
        /// Drop a message its sender may not send, and say why (logged once per link).
        case drop(WireMessage, session: Int, reason: String)
        /// The member on `session` said goodbye (logged), leaving the cluster when `leaving`.
        case saidGoodbye(session: Int, reason: String?, leaving: Bool)
    }

    /// How a `goodbye` reason started, before protocol 1.4's `duplicate` field, when the sender closed
    /// the link as a duplicate.
    static let duplicatePrefix = "duplicate:"
    /// The `goodbye` reason of a link closed as idle.
    static let idleReason = "idle"

    /// Which link stands for each member.
    private(set) var membership: Membership
    /// How members are found, and when a member's life is over.
    private(set) var discovery: any MemberDiscovery
    /// Whether the discovery follows the providers members announce on their links (its
    /// `followsLinkProviders`, read once: a discovery's kind never changes).
    private let discoveryFollowsLinks: Bool
    /// What this node shares, per provider life.
    private(set) var exports: Exports
    /// The proxies of what the others share.
    private(set) var proxies: Proxies
    /// Sessions whose link closed in order as idle (either side said so), until their end is taken.
    private(set) var idleClosed: Set<Int> = []
    /// Links drained as duplicates (`drain`), until they close: they stand for no member, and are served
    /// only for what was sent on them before.
    private(set) var drained: Set<Int> = []
    /// The drained links this side closes once idle (the member said they are duplicates).
    private(set) var closingWhenIdle: Set<Int> = []
    /// Who holds the established links, and who may hold one more.
    private(set) var admission: Admission
    /// Members an operator forgot, until they link again.
    private(set) var forgottenNames: Set<String> = []
    /// The member lives that said goodbye on their link in use (not as a duplicate, nor as idle), by
    /// name: once that link ends with no other of the life taking over, the member is `stopped`.
    private(set) var saidGoodbye: [String: String] = [:]
    /// Which links are idle and close (etcd mode only: the mesh keeps its links).
    private(set) var idle: IdleLinks?
    /// The service keys in etcd (etcd mode only).
    private(set) var keys: ServiceKeys?
    /// What the node makes of its etcd lease: degraded or not, exports withdrawn or not (etcd mode only).
    private(set) var lease: LeaseRule?
    /// etcd mode: the lease came back while the exports were being withdrawn for its loss; they are
    /// shared again (`lease(.shareAgain(afterWithdrawal: true))`) once no withdrawal is under way, so a
    /// life's withdrawal ends before it is announced again.
    private(set) var sharesAgainAfterWithdrawals = false
    /// Each member's health at the last reading (nil before the first): the membership events tell what
    /// changed since.
    private(set) var health: [String: MemberHealth]?
    /// Who follows this node's events, and the subscriptions to other members for them.
    private(set) var subscriptions = Subscriptions()
    /// The dials: the addresses the mesh keeps dialled, the links etcd mode opens on demand.
    private(set) var dials: Dials
    /// Withdrawals begun whose peers are told once the life's key is deleted (etcd mode), by life.
    private(set) var heldWithdrawals: [Int: ServiceProvider] = [:]
    /// How long a drained duplicate link is answered at most: a call's timeout and a handshake's.
    let drainDeadline: Duration
    /// How long calls wait for the replacement of a link in use closed as a duplicate: a handshake's timeout.
    let replacementWait: Duration

    /// A node named `name` that finds members through `discovery`, can proxy `interfaces`, holds links
    /// within `limits` (a node run by `ownUID`), gives each withdrawal `withdrawTimeout` for the
    /// acknowledgements, answers calls for `callTimeout`, gives a handshake `handshakeTimeout` and, with
    /// etcd's directory as its discovery, closes a link that carried no call for `idleTimeout` and follows
    /// its lease of `leaseTTL`. A kept address is dialled again after a backoff from `reconnectBackoff.first`
    /// to its maximum.
    init(
        name: String, discovery: any MemberDiscovery, interfaces: [String: Proxies.Interface],
        limits: Admission.Limits = Admission.Limits(total: 1024), ownUID: UInt32 = 0, withdrawTimeout: Duration,
        callTimeout: Duration = .seconds(30), handshakeTimeout: Duration = .seconds(5), idleTimeout: Duration = .seconds(10),
        leaseTTL: Duration = .seconds(10),
        reconnectBackoff: (first: Duration, maximum: Duration) = (.milliseconds(50), .seconds(2))
    ) {
        self.membership = Membership(name: name)
        self.discovery = discovery
        self.discoveryFollowsLinks = discovery.followsLinkProviders
        self.exports = Exports(withdrawTimeout: withdrawTimeout)
        self.proxies = Proxies(interfaces: interfaces)
        self.admission = Admission(limits: limits, ownUID: ownUID)
        self.idle = discovery is EtcdDirectory ? IdleLinks(timeout: idleTimeout) : nil
        self.keys = discovery is EtcdDirectory ? ServiceKeys(node: name) : nil
        self.lease = discovery is EtcdDirectory ? LeaseRule(ttl: leaseTTL) : nil
        self.dials = Dials(backoff: reconnectBackoff)
        self.drainDeadline = callTimeout + handshakeTimeout
        self.replacementWait = handshakeTimeout
    }

    /// The node's name.
    var name: String { membership.name }

    /// Takes one event; returns the directives, in the order to carry them out.
    mutating func receive(_ event: Event) -> [Directive] {
        var directives: [Directive] = []
        switch event {
        case .started:
            tell(discovery: .started, into: &directives)
        case .established(let session, let holder, let peerUID):
            if case .refuse(let reason) = admission.admit(session: session, holder, peerUID: peerUID) {
                directives.append(.notAdmitted(session: session, reason: reason))
            }
        case .silent(let session, _) where membership.member(of: session) != nil:
            return receive(.link(.heartbeatMissed(session: session)))
        case .silent(let session, let peer):
            directives.append(.link(.close(session: session, reason: "no heartbeat from \(peer)")))
        case .link(let linkEvent):
            let session: Int? = switch linkEvent {
            case .linkClosed(let session), .heartbeatMissed(let session), .closedAsDuplicate(let session),
                 .departed(let session), .handshakeCompleted(let session, _, _, _, _):
                session
            case .replacementOverdue(_, let closed): closed
            case .lifeEnded(let member, _, _): membership.session(of: member)
            case .forgotten: nil
            }
            let inUse = linkInUse(session)
            follow(membership.receive(linkEvent), endingLink: inUse, into: &directives)
            if case .linkClosed(let session) = linkEvent {
                follow(subscriptions: .ended(session: session), into: &directives)
                idleClosed.remove(session)
                drained.remove(session)
                closingWhenIdle.remove(session)
                admission.release(session: session)
            }
        case .reregistered(let now, let reason):
            for session in membership.linkOwners.keys.sorted() {
                idleClosed.insert(session)
                directives.append(.link(.close(session: session, reason: reason)))
            }
            for session in drained.sorted() {
                directives.append(.link(.close(session: session, reason: reason)))
            }
            follow(lease: .registered(at: now), into: &directives)
        case .idleSweep(let now, let busy):
            let linked = Set(membership.linkedNames)
            // A member whose events this node follows keeps its link.
            let busy = busy.union(subscriptions.followed.keys.map(\.member))
            for case .close(let member) in idle?.receive(.sweep(at: now, linked: linked, busy: busy)) ?? [] {
                guard let session = membership.session(of: member) else { continue }
                idleClosed.insert(session)
                directives.append(.closeIdle(session: session, member: member))
            }
        case .received(let message, let session, let role):
            receive(message, on: session, role: role, into: &directives)
        case .drainedIdle(let session) where closingWhenIdle.contains(session):
            directives.append(.link(.close(session: session, reason: "the duplicate link is drained")))
        case .drainedIdle:
            break
        case .directory(let discoveryEvent):
            tell(discovery: discoveryEvent, into: &directives)
        case .exports(let exportsEvent):
            tell(exports: exportsEvent, into: &directives)
        case .keys(let keysEvent):
            follow(keys?.receive(keysEvent, exports: exports) ?? [], into: &directives)
        case .lease(let leaseEvent):
            follow(lease: leaseEvent, into: &directives)
        case .dialled(let attempt, let address, let member):
            tell(discovery: .dialled(address: address, member: member), into: &directives)
            follow(dials: .reached(attempt: attempt, member: member), into: &directives)
        case .dialEnded(let attempt, let session, let random):
            // Kept: the link stands for its member (in use or standby), or is drained as a duplicate.
            let kept = session.map { membership.member(of: $0) != nil || drained.contains($0) } ?? false
            let linked = dials.keptAddress(of: attempt).map { linkInUse(at: $0) != nil } ?? false
            follow(dials: .ended(attempt: attempt, kept: kept, linked: linked, random: random), into: &directives)
        case .dialDue(let address, let attempt):
            follow(dials: .due(address: address, attempt: attempt, linked: linkInUse(at: address) != nil), into: &directives)
        case .redialDue(let member, let token):
            let linked = membership.session(of: member) != nil || membership.members[member]?.awaitingReplacement != nil
            follow(dials: .redialDue(member: member, token: token, addresses: dialAddresses(of: member), linked: linked),
                   into: &directives)
        case .linkWanted(let member):
            follow(dials: .open(member: member, addresses: dialAddresses(of: member), redial: false), into: &directives)
        case .subscribed(let subscriber):
            follow(subscriptions: .subscribed(subscriber, linked: membership.linkedNames), into: &directives)
        case .unsubscribed(let session, let id):
            follow(subscriptions: .unsubscribed(session: session, id: id), into: &directives)
        case .subscriptionsLagged(let session):
            follow(subscriptions: .ended(session: session), into: &directives)
        case .healthRead(let now):
            // The first reading is the starting point: it tells nothing.
            if let before = health {
                directives += MemberHealth.changes(from: before, to: now).map { .memberHealthChanged($0) }
            }
            health = now
        case .proxyDisposed(let id):
            tell(proxies: .disposed(id), into: &directives)
        case .proxies(let proxiesEvent):
            tell(proxies: proxiesEvent, into: &directives)
        case .forgotten(let member, let relayed):
            // Only an unlinked member is forgotten: a linked one would be dialled or announced again at once.
            if let reason = member == name ? "\(name) cannot forget itself"
                : membership.session(of: member) != nil ? "\(member) is linked to \(name); stop it before forgetting it"
                : !relayed && !knownMembers.contains(member) ? "no member is named \(member)" : nil {
                return [.forgetRefused(member: member, reason: reason)]
            }
            let addresses = Set(memberAddresses[member] ?? []).union(discovery.addresses(of: member)).sorted()
            forgottenNames.insert(member)
            saidGoodbye[member] = nil
            follow(membership.receive(.forgotten(name: member)), endingLink: nil, into: &directives)
            tell(discovery: .forgotten(name: member), into: &directives)
            let inUse = relayed ? [] : membership.members.values.compactMap { $0.link?.session }.sorted()
            directives.append(.forgot(member: member, addresses: addresses, tell: inUse))
        }
        finishEvent(into: &directives)
        return directives
    }

    /// What follows every event once it was taken: sharing again once the withdrawals it waited for ended.
    private mutating func finishEvent(into directives: inout [Directive]) {
        if sharesAgainAfterWithdrawals, !exports.isWithdrawing {
            sharesAgainAfterWithdrawals = false
            directives.append(.lease(.shareAgain(afterWithdrawal: true)))
        }
    }

    /// A call used the link to `member` at `now` (it is not idle); read only in etcd mode.
    mutating func linkUsed(by member: String, at now: @autoclosure () -> ContinuousClock.Instant) {
        // Without `idle` (the mesh) the clock is not read: the chain stops before the event is made.
        _ = idle?.receive(.used(member: member, at: now()))
    }

    // MARK: - Joining the machines

    /// `session` when it is the link in use of its member.
    private func linkInUse(_ session: Int?) -> Int? {
        guard let session, membership.member(of: session)?.link?.session == session else { return nil }
        return session
    }

    /// Carries `Membership`'s directives through to the other machines; `link` is the link in use that the
    /// event ended, if it did.
    private mutating func follow(
        _ linkDirectives: [Membership.Directive], endingLink link: Int?, into directives: inout [Directive]
    ) {
        for directive in linkDirectives {
            switch directive {
            case .adopt(_, let member, _):
                saidGoodbye[member] = nil
                directives.append(.link(directive))
                let record = membership.members[member]
                forgottenNames.remove(member)
                tell(discovery: .linked(
                    member: member, incarnation: record?.incarnation ?? "", addresses: record?.addresses ?? []),
                     into: &directives)
                tell(exports: .peerLinked(member), into: &directives)
                follow(subscriptions: .memberLinked(member), into: &directives)
                settleLinkWaiters(of: member, into: &directives)
            case .promote(_, let member):
                saidGoodbye[member] = nil
                // The link that stood for the member until now (if the event ended it) fails what it carried.
                if let link { directives.append(.retired(session: link)) }
                directives.append(.link(directive))
                // The subscriptions to the member's events are made again on the link that takes over.
                follow(subscriptions: .memberLinked(member), into: &directives)
                // The member may have closed the first link as the duplicate without reading what was sent
                // on it: the members and the announcements go again on this one (the member keeps one
                // provider per life, however often it is announced).
                directives.append(.discovery(.sendMembers(to: member)))
                tell(exports: .peerLinked(member), into: &directives)
                settleLinkWaiters(of: member, into: &directives)
            case .withdrawAll(let member, let incarnation):
                let inOrder = link.map { idleClosed.remove($0) != nil } ?? false
                _ = idle?.receive(.unlinked(member: member))
                directives.append(.memberLost(member: member, incarnation: incarnation, link: link, inOrder: inOrder))
                tell(discovery: .unlinked(member: member, incarnation: incarnation, inOrder: inOrder), into: &directives)
                tell(exports: .peerLost(member), into: &directives)
                follow(subscriptions: .memberUnlinked(member), into: &directives)
                settleLinkWaiters(of: member, into: &directives)
                // The kept addresses that waited for a link at them to end are dialled again.
                for address in dials.waiting where linkInUse(at: address) == nil {
                    follow(dials: .unlinked(address: address), into: &directives)
                }
            case .refuse(let session, _):
                admission.release(session: session)
                directives.append(.link(directive))
            case .awaitReplacement(let member, let closed):
                directives.append(.link(directive))
                follow(subscriptions: .memberUnlinked(member), into: &directives)
                directives.append(.schedule(.link(.replacementOverdue(member: member, closed: closed)), after: replacementWait))
            case .drain(let session, let member):
                drained.insert(session)
                closingWhenIdle.insert(session)
                directives.append(.drain(session: session, member: member, goodbye: nil, deadline: drainDeadline))
            case .closeDuplicate(let session, let member):
                drained.insert(session)
                directives.append(.drain(
                    session: session, member: member, goodbye: "\(Self.duplicatePrefix) a link to \(member) already exists",
                    deadline: drainDeadline))
            case .keepStandby, .close:
                directives.append(.link(directive))
            }
        }
    }

    /// Feeds `Exports`. In etcd mode a withdrawal's peers are told once the life's key is deleted: the
    /// `withdraw` that begins it (and any sent again meanwhile) is held until `ServiceKeys` says `tell`; a
    /// withdrawal whose deadline passes first is told then, to the peers it still waits for, before its
    /// teardown goes on. A withdrawal told already is sent again at once to a member whose link was replaced.
    private mutating func tell(exports event: Exports.Event, into directives: inout [Directive]) {
        for directive in exports.receive(event) {
            switch directive {
            case .withdraw(let provider, _) where heldWithdrawals[provider.life] != nil:
                // Sent again to a peer whose link was replaced: the held withdrawal tells it.
                continue
            case .withdraw(let provider, _) where keys != nil && event.beginsWithdrawals:
                switch keys?.withdrawing(life: provider.life) {
                case .deleteFirst(let requests):
                    heldWithdrawals[provider.life] = provider
                    follow(requests, into: &directives)
                case .tellNow(let requests):
                    directives.append(.exports(directive))
                    follow(requests, into: &directives)
                case nil:
                    directives.append(.exports(directive))
                }
            case .release(let provider, .timedOut(let awaiting, _)) where heldWithdrawals[provider.life] != nil:
                heldWithdrawals[provider.life] = nil
                if !awaiting.isEmpty { directives.append(.exports(.withdraw(provider, peers: awaiting))) }
                directives.append(.exports(directive))
            case .release(let provider, .noPeers) where keys != nil:
                // Withdrawn from nobody (no member linked): its key goes all the same, now (the keys are not
                // brought in line while the exports are withdrawn, etcd lease thought lost).
                switch keys?.withdrawing(life: provider.life) {
                case .tellNow(let requests)?, .deleteFirst(let requests)?: follow(requests, into: &directives)
                case nil: break
                }
                directives.append(.exports(directive))
            case .release(let provider, _):
                heldWithdrawals[provider.life] = nil
                directives.append(.exports(directive))
            default:
                directives.append(.exports(directive))
            }
        }
    }

    /// Feeds `LeaseRule`, and tells the service keys what its outcome means for them: a registration
    /// under a new lease leaves none of the earlier lease's keys; a lease thought lost tells withdrawals at
    /// once (etcd does not answer their deletes); a recovery lets them wait for their deletes again.
    private mutating func follow(lease event: LeaseRule.Event, into directives: inout [Directive]) {
        guard var rule = lease else { return }
        if case .registered = event { follow(keys?.receive(.leaseEnded, exports: exports) ?? [], into: &directives) }
        let ruled = rule.receive(event)
        lease = rule
        for directive in ruled {
            switch directive {
            case .withdrawExports:
                sharesAgainAfterWithdrawals = false
                follow(keys?.receive(.leaseLost, exports: exports) ?? [], into: &directives)
            case .recover:
                follow(keys?.receive(.leaseKept, exports: exports) ?? [], into: &directives)
            case .shareAgain(afterWithdrawal: true):
                // Told once the withdrawals under way end (at the end of the event that ends the last).
                sharesAgainAfterWithdrawals = true
                continue
            case .degrade, .registerAgain, .shareAgain:
                break
            }
            directives.append(.lease(directive))
        }
    }

    /// Carries out what `ServiceKeys` decided: a retry comes back as an event; a withdrawal whose key is
    /// gone is told to the peers it still waits for.
    private mutating func follow(_ keyDirectives: [ServiceKeys.Directive], into directives: inout [Directive]) {
        for directive in keyDirectives {
            switch directive {
            case .put, .delete:
                directives.append(.keys(directive))
            case .retry(let life, let delay):
                directives.append(.schedule(.keys(.retry(life: life)), after: delay))
            case .tell(let life):
                guard let provider = heldWithdrawals.removeValue(forKey: life),
                      let awaiting = exports.export(life: life)?.withdrawal?.awaiting, !awaiting.isEmpty
                else { continue }
                directives.append(.exports(.withdraw(provider, peers: awaiting.sorted())))
            }
        }
    }

    /// Feeds the discovery; what it says of proxies goes to `Proxies`, the rest to the node.
    private mutating func tell(discovery event: DiscoveryEvent, into directives: inout [Directive]) {
        for directive in discovery.receive(event) {
            switch directive {
            case .dropProxies(let member, let incarnation):
                tell(proxies: .lifeEnded(member: member, incarnation: incarnation), into: &directives)
            case .offer(let listing):
                tell(proxies: .announced(listing.announcement, incarnation: listing.incarnation), into: &directives)
            case .retract(let listing):
                tell(proxies: .retracted(listing.announcement, incarnation: listing.incarnation), into: &directives)
            case .memberGone(let member, let incarnation):
                // etcd no longer lists the life: every link of it closes, and the member is lost now.
                directives.append(.discovery(directive))
                let inUse = membership.session(of: member)
                let reason = "\(member)'s etcd lease ended"
                follow(membership.receive(.lifeEnded(member: member, incarnation: incarnation, reason: reason)), endingLink: inUse,
                       into: &directives)
            case .dial(let address):
                // An address that does not parse is never dialled (a peer's list may hold anything).
                guard (try? Address(parsing: address)) != nil else { continue }
                follow(dials: .keep(address: address, linked: linkInUse(at: address) != nil), into: &directives)
            case .stopDialling(let address):
                follow(dials: .stop(address: address), into: &directives)
            case .redial(let member, let delay):
                follow(dials: .redial(member: member, after: delay), into: &directives)
            case .restoreOwnKey:
                // Only under a lease in force: registered, and not degraded (registering again as a new
                // incarnation puts the key back then).
                guard let rule = lease, rule.lastKept != nil, rule.degraded == nil else { continue }
                directives.append(.discovery(directive))
            case .sendMembers, .ignoredUnknownKeys:
                directives.append(.discovery(directive))
            }
        }
    }

    /// Feeds `Dials`: its timers come back as events, a re-dial that failed goes to the discovery, and
    /// what waited for a dial on demand goes on once it ends.
    private mutating func follow(dials event: Dials.Event, into directives: inout [Directive]) {
        for directive in dials.receive(event) {
            switch directive {
            case .connect(let attempt, let address):
                directives.append(.dial(attempt: attempt, address: address))
            case .backOff(let address, let attempt, let delay):
                directives.append(.schedule(.dialDue(address: address, attempt: attempt), after: delay))
            case .redialLater(let member, let token, let delay):
                directives.append(.schedule(.redialDue(member: member, token: token), after: delay))
            case .adopt(let attempt):
                directives.append(.adoptDialled(attempt: attempt))
            case .discard(let attempt, let reason):
                let goodbye = discovery is EtcdDirectory ? Self.idleReason : "\(name) \(reason)"
                directives.append(.discardDialled(attempt: attempt, reason: reason, goodbye: goodbye))
            case .opened(let member):
                settleLinkWaiters(of: member, into: &directives)
            case .redialFailed(let member, let random):
                tell(discovery: .redialFailed(member: member, random: random), into: &directives)
            }
        }
    }

    /// Feeds `Subscriptions`; its requests go on the member's link in use (with none, the subscription
    /// ended with the link already).
    private mutating func follow(subscriptions event: Subscriptions.Event, into directives: inout [Directive]) {
        for directive in subscriptions.receive(event) {
            switch directive {
            case .follow(let member, let id, let `operator`):
                guard let session = membership.session(of: member) else { continue }
                directives.append(.followEvents(session: session, id: id, operator: `operator`))
            case .unfollow(let member, let id, let request):
                guard let session = membership.session(of: member) else { continue }
                directives.append(.unfollowEvents(session: session, id: id, request: request))
            }
        }
    }

    /// A control request of `session` starts, if `Admission` lets it (then it counts until
    /// `finishRequest`). `mutating` as `route`: asked for every request.
    mutating func startRequest(session: Int) -> Admission.Verdict { admission.startRequest(session: session) }

    /// A control request of `session` finished.
    mutating func finishRequest(session: Int) { admission.finishRequest(session: session) }

    /// Whether `session` may follow events once more, given the subscriptions its link and its console
    /// identity hold (`Admission`).
    mutating func mayFollow(session: Int) -> Admission.Verdict {
        let held = subscriptions.subscribers.filter { $0.session == session }.count
        let identity = admission.consoleIdentity(of: session).map { name in
            subscriptions.subscribers.filter { admission.consoleIdentity(of: $0.session) == name }.count
        } ?? held
        return admission.may(.follow, session: session, link: held, identity: identity)
    }

    /// A new id for a request to a member (a relayed request, a subscription to its events): one
    /// numbering, so an answer finds its request.
    mutating func newRequestID() -> Int { subscriptions.newRequestID() }

    /// What waits for a link to `member` goes on once a link is in use, or once none is on its way (no
    /// replacement awaited, no dial on demand).
    private func settleLinkWaiters(of member: String, into directives: inout [Directive]) {
        let onItsWay = membership.members[member]?.awaitingReplacement != nil || dials.isOpening(member)
        guard membership.session(of: member) != nil || !onItsWay else { return }
        directives.append(.linkSettled(member: member))
    }

    /// The addresses a dial on demand tries for `member`: those etcd lists for it that parse, in order.
    private func dialAddresses(of member: String) -> [String] {
        (discovery.member(named: member)?.addresses ?? []).filter { (try? Address(parsing: $0)) != nil }
    }

    /// Feeds `Proxies`; an acknowledgement goes on the link the withdrawal came by while that link still
    /// stands for the member (in use or standby), else on the member's link in use (with none, it names
    /// the link it came by, which is gone: the member's withdrawal ended with its link).
    private mutating func tell(proxies event: Proxies.Event, into directives: inout [Directive]) {
        for directive in proxies.receive(event) {
            guard case .acknowledge(var owed) = directive else {
                directives.append(.proxies(directive))
                continue
            }
            if membership.member(of: owed.session) == nil, let inUse = membership.session(of: owed.provider.node) {
                owed.session = inUse
            }
            directives.append(.proxies(.acknowledge(owed)))
        }
    }

    // MARK: - Who may send what

    /// Where a message goes, by who sent it.
    enum Route: Equatable, Sendable {
        /// The shell serves it (a call, cancel, request, response or event).
        case serve
        /// Its sender may not send it: drop it, saying why.
        case drop(reason: String)
        /// It counts for nothing (an answer that answers no call, a drained link's announcements).
        case ignore
        /// It changes the cluster's view: `receive(.received(…))` decides what follows (`take` does both).
        case decide
    }

    /// Where `message`, on the link of `session`, goes: a console sends requests, calls and cancels only; a
    /// drained duplicate link is served for the calls and requests sent on it and the answers to this
    /// node's; a member announces and withdraws only its own providers and acknowledges only this node's.
    /// Asked for every message (calls included), so it changes nothing and allocates nothing.
    /// `mutating` though it changes nothing: the node calls it for every message on the state it stores,
    /// and a non-mutating call there copies the whole state (every table retained and released) first.
    mutating func route(_ message: WireMessage, session: Int, role: Role) -> Route {
        routing(message, session: session, role: role).route
    }

    /// Takes a message received on the link of `session`, in one call: where it goes (`route`) and, when it
    /// changes the cluster's view, the directives that follow (`receive(.received(…))`; empty otherwise, so
    /// a call or an event allocates nothing).
    mutating func take(_ message: WireMessage, session: Int, role: Role) -> (route: Route, directives: [Directive]) {
        let (route, member) = routing(message, session: session, role: role)
        guard case .decide = route, let member else { return (route, []) }
        var directives: [Directive] = []
        decide(message, from: member, on: session, into: &directives)
        finishEvent(into: &directives)
        return (route, directives)
    }

    /// `route`'s answer, with the member the link stands for when the message is decided (nil otherwise,
    /// so a call copies no record).
    private mutating func routing(_ message: WireMessage, session: Int, role: Role) -> (route: Route, member: Membership.Record?) {
        if role == .console {
            switch message {
            case .request, .call, .cancel: return (.serve, nil)
            case .goodbye, .error: return (.ignore, nil)
            default: return (.drop(reason: "a console sends requests, calls and cancels only"), nil)
            }
        }
        if !drained.isEmpty, drained.contains(session) {
            // What the member sent before it learnt the link is a duplicate is served; the rest went, or goes
            // again, on the link that stands for the member.
            switch message {
            case .call, .cancel, .request, .response: return (.serve, nil)
            default: return (.ignore, nil)
            }
        }
        guard let member = membership.member(of: session) else { return (.drop(reason: "the link is no longer in use"), nil) }
        switch message {
        case .call, .cancel, .request, .response, .event: return (.serve, nil)
        case .members, .goodbye: return (.decide, member)
        case .announce(let announcement) where announcement.node != member.name:
            return (.drop(reason: "it announces a provider on \(announcement.node)"), nil)
        case .withdraw(let provider) where provider.node != member.name:
            return (.drop(reason: "it withdraws a provider on \(provider.node)"), nil)
        case .withdrawAck(let provider) where provider.node != name:
            return (.drop(reason: "it acknowledges a provider on \(provider.node)"), nil)
        case .announce, .withdraw, .withdrawAck: return (.decide, member)
        default:
            // Answers went to the session's calls on the loop thread; what comes here (an `error` without an
            // id, a `ping` or `pong`) answers no call.
            return (.ignore, nil)
        }
    }

    private mutating func receive(
        _ message: WireMessage, on session: Int, role: Role, into directives: inout [Directive]
    ) {
        let (route, member) = routing(message, session: session, role: role)
        switch route {
        case .serve: directives.append(.serve(message, session: session))
        case .drop(let reason): directives.append(.drop(message, session: session, reason: reason))
        case .ignore: break
        case .decide:
            guard let member else { return }
            decide(message, from: member, on: session, into: &directives)
        }
    }

    /// What a member's message changes: the members it lists, a provider announced or withdrawn, an
    /// acknowledgement, a goodbye.
    private mutating func decide(
        _ message: WireMessage, from member: Membership.Record, on session: Int, into directives: inout [Directive]
    ) {
        switch message {
        case .members(let list):
            // The mesh keeps forgotten members out of what it learns from lists itself.
            tell(discovery: .peerListed(list), into: &directives)
        case .announce(let announcement):
            tell(proxies: .announced(announcement, incarnation: member.incarnation), into: &directives)
            if discoveryFollowsLinks {
                tell(discovery: .linkAnnounced(member: member.name, life: announcement.life), into: &directives)
            }
        case .withdraw(let provider):
            tell(proxies: .withdrawn(provider, incarnation: member.incarnation, session: session), into: &directives)
            if discoveryFollowsLinks {
                tell(discovery: .linkWithdrew(member: member.name, life: provider.life), into: &directives)
            }
        case .withdrawAck(var provider):
            // A withdrawal held until its key is deleted was told to nobody yet: an acknowledgement naming it
            // is a late one of an earlier withdrawal of the same life, and counts for nothing. (A peer that
            // predates lives names the provider by fiber: it acknowledges a withdrawal told.)
            if provider.life == 0 {
                guard let life = exports.withdrawingLife(matching: provider, excluding: Set(heldWithdrawals.keys)) else { break }
                provider.life = life
            }
            guard heldWithdrawals[provider.life] == nil else { break }
            tell(exports: .acknowledged(provider, by: member.name), into: &directives)
        case .goodbye(let reason, let leaving, let duplicate):
            // Only etcd mode closes idle links; such a close is in order, not a failure.
            if reason == Self.idleReason, discovery is EtcdDirectory { idleClosed.insert(session) }
            // An orderly stop: the member's life ends said, on its link in use (a duplicate's or an idle
            // link's goodbye says nothing of the life).
            if !duplicate, reason?.hasPrefix(Self.duplicatePrefix) != true, reason != Self.idleReason,
               membership.session(of: member.name) == session {
                saidGoodbye[member.name] = member.incarnation
            }
            directives.append(.saidGoodbye(session: session, reason: reason, leaving: leaving))
            if duplicate || reason?.hasPrefix(Self.duplicatePrefix) == true {
                follow(membership.receive(.closedAsDuplicate(session: session)), endingLink: nil, into: &directives)
            }
            // A member that leaves the cluster is dropped from the view at once (not forgotten: it may join
            // again); a plain goodbye (a node stopping, perhaps to restart) keeps it listed.
            if leaving {
                let inUse = linkInUse(session)
                follow(membership.receive(.departed(session: session)), endingLink: inUse, into: &directives)
                tell(discovery: .departed(member: member.name), into: &directives)
            }
        default:
            break
        }
    }
}
