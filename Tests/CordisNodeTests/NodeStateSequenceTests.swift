@testable import CordisNode
import CordisProcessTesting
import CordisWire
import Foundation
import Testing

/// `NodeState` under seeded random sequences over the whole state (links, new lives, duplicates, goodbyes,
/// withdrawals both ways, proxies, idle closes, forgets), with its invariants checked after every step.
///
/// A few seeds run by default; `CORDIS_NODESTATE_SEEDS=N` runs N (the long mode).
@Suite("NodeState: seeded random sequences keep every invariant")
struct NodeStateSequenceTests {
    static let seeds: [UInt64] = {
        let count = ProcessInfo.processInfo.environment["CORDIS_NODESTATE_SEEDS"].flatMap { UInt64($0) } ?? 6
        return (0..<max(1, min(count, 100_000))).map { 0x5EED_0000 + $0 }
    }()

    /// What the test keeps of the world around the state: the links it opened, and what it was told.
    struct World {
        var state: NodeState
        let etcd: Bool
        var random: SeededGenerator
        var nextSession = 0
        /// Links the test holds, by session: member and life.
        var open: [Int: (name: String, incarnation: String)] = [:]
        /// Links that `NodeState` drained (duplicates).
        var draining: Set<Int> = []
        /// Provider lives of this node whose withdrawal is under way.
        var withdrawing: Set<Int> = []
        /// Provider lives of this node whose teardown is held (shared, or being withdrawn).
        var held: Set<Int> = []
        /// The members each withdrawal under way was sent to, by provider life.
        var told: [Int: Set<String>] = [:]
        /// Provider lives whose withdrawal deadline is armed (neither cancelled nor passed yet).
        var deadlines: Set<Int> = []
        /// Proxy disposals under way (the test reports their end at random later steps), by id.
        var disposing: [Int: Proxies.Key] = [:]
        /// Acknowledgements owed to members and not sent yet.
        var outstanding = 0
        /// The time idle sweeps report: it moves on by a few seconds per sweep.
        var clock = ContinuousClock.now
        /// etcd mode: the provider lives whose service key etcd holds, under the lease in force.
        var keysInEtcd: Set<Int> = []
        /// etcd mode: the puts and deletes of service keys on their way (the test answers them at random
        /// later steps), by attempt, with the lease they were made under.
        var requests: [Int: (life: Int, puts: Bool, lease: Int)] = [:]
        /// etcd mode: the lease in force (a new one after `leaseEnded`).
        var lease = 0
        /// etcd mode: lives whose last request etcd did not answer (carried out or not).
        var unanswered: Set<Int> = []
        /// etcd mode: lives whose request is to be tried again.
        var retries: Set<Int> = []
        /// etcd mode: whether the node thinks its lease lost (withdrawals are then told at once).
        var leaseThoughtLost = false
        /// Dials on their way (the test answers them at random later steps), by attempt: the address.
        var dialling: [Int: String] = [:]
        /// What the node reports next, before anything else happens (a dialled link taken or closed, then
        /// the dial's end: the shell does both in one turn of the actor).
        var forced: [NodeState.Event] = []
        /// The dials' timers (backoffs, re-dials), fired at random later steps.
        var dialTimers: [NodeState.Event] = []
        /// Calls waiting for a link, by member.
        var linkWaiters: [String: Int] = [:]
        /// The member each dial reached, by attempt, until the node takes or closes its link.
        var reached: [Int: (name: String, incarnation: String)] = [:]
        /// The subscriptions to members' events this node sent, by id: the member and the link it went on.
        var follows: [Int: (member: String, session: Int)] = [:]
        /// The consoles' links that subscribe to events (sessions 1000 and up).
        static let consoles = [1000, 1001, 1002]
        static let operators: [OperatorIdentity?] = [
            OperatorIdentity(name: "alice", identities: ["user:alice"]), OperatorIdentity(name: "bob", identities: ["user:bob"]), nil,
        ]
        var problems: [String] = []

        static let members = ["a", "b", "d", "e"]

        init(seed: UInt64, etcd: Bool) {
            self.etcd = etcd
            random = SeededGenerator(seed: seed)
            let discovery: any MemberDiscovery = etcd
                ? EtcdDirectory(name: "c") : MeshGossip(name: "c", ownAddresses: [], seeds: ["unix:/s1", "unix:/s2"])
            state = NodeState(
                name: "c", discovery: discovery, interfaces: NodeStateTests.interfaces,
                withdrawTimeout: NodeStateTests.withdrawTimeout)
        }

        mutating func pick<T>(_ items: [T]) -> T? {
            items.isEmpty ? nil : items[Int.random(in: 0..<items.count, using: &random)]
        }

        /// One random event, applied and checked.
        mutating func step(_ number: Int) {
            let event = nextEvent()
            let awaitingBefore = state.membership.members.compactMapValues(\.awaitingReplacement)
            let liveBefore = state.proxies.live
            // A withdrawal the member may send is owed exactly one acknowledgement; anything else none.
            var owed = 0
            if case .received(let message, let session, let role) = event, case .withdraw = message,
               state.route(message, session: session, role: role) == .decide {
                owed = 1
            }
            // A deadline fed while armed is its timer firing.
            if case .exports(.deadlinePassed(let life)) = event { deadlines.remove(life) }
            if case .proxyDisposed(let id) = event { disposing[id] = nil }
            let linkedBefore: Bool = if case .forgotten(let name, _) = event { state.membership.session(of: name) != nil } else { false }
            let context = "step \(number) (\(event))"
            let directives: [NodeState.Directive]
            if case .received(let message, let session, let role) = event {
                // Taken as the node takes it, in one call; the same event received decides the same.
                var twin = state
                let received = twin.receive(event)
                let (route, taken) = state.take(message, session: session, role: role)
                if case .decide = route {
                    #expect(taken == received, "\(context): take decided otherwise than receive")
                }
                directives = received
            } else {
                directives = state.receive(event)
            }
            if case .forgotten(let name, _) = event {
                // A linked member is never forgotten; a forget refused changes nothing; one done leaves the
                // member forgotten and unlinked.
                let refused = directives.first?.isForgetRefusal == true
                if linkedBefore, !refused { problems.append("\(context): forgot \(name), which is linked") }
                if refused, directives.count != 1 { problems.append("\(context): a refused forget did more: \(directives)") }
                if !refused, !state.forgottenNames.contains(name) { problems.append("\(context): \(name) is not forgotten") }
            }
            if case .idleSweep(_, let busy) = event {
                for case .closeIdle(_, let member) in directives where busy.contains(member) {
                    problems.append("\(context): closed \(member)'s link as idle while it has work in flight")
                }
            }
            var disposalEnded = false
            if case .proxyDisposed = event { disposalEnded = true }
            follow(directives, owed: owed, liveBefore: liveBefore, disposalEnded: disposalEnded, context: context)
            check(directives, awaitingBefore: awaitingBefore, context: context)
        }

        mutating func nextEvent() -> NodeState.Event {
            if !forced.isEmpty { return forced.removeFirst() }
            let sessions = open.keys.sorted()
            let life = Int.random(in: 1...4, using: &random)
            if let dial = nextDialEvent() { return dial }
            if Int.random(in: 0..<10, using: &random) == 0 {
                // A console subscribes (cluster-wide or not, for one of three operators), unsubscribes, lags
                // behind, or its link closes.
                let console = pick(Self.consoles)!
                switch Int.random(in: 0..<5, using: &random) {
                case 0, 1:
                    return .subscribed(Subscriptions.Subscriber(
                        session: console, id: Int.random(in: 1...3, using: &random), cluster: Int.random(in: 0..<4, using: &random) != 0,
                        on: nil, operator: pick(Self.operators)!))
                case 2:
                    return .unsubscribed(session: console, id: Bool.random(using: &random) ? nil : Int.random(in: 1...3, using: &random))
                case 3:
                    return .subscriptionsLagged(session: console)
                default:
                    return .link(.linkClosed(session: console))
                }
            }
            if !disposing.isEmpty, Int.random(in: 0..<5, using: &random) == 0 {
                return .proxyDisposed(pick(disposing.keys.sorted())!)
            }
            if etcd, let keys = nextKeysEvent() { return .keys(keys) }
            switch Int.random(in: 0..<16, using: &random) {
            case 0, 1, 2:
                nextSession += 1
                let name = pick(Self.members)!
                let incarnation = "\(name)\(Int.random(in: 1...2, using: &random))"
                open[nextSession] = (name, incarnation)
                let side: Handshake.Side = Bool.random(using: &random) ? .initiator : .responder
                return .link(.handshakeCompleted(
                    session: nextSession, side: side, name: name, incarnation: incarnation, addresses: ["unix:/\(name)"]))
            case 3, 4:
                guard let session = pick(sessions) else { return .started }
                open[session] = nil
                draining.remove(session)
                return .link(.linkClosed(session: session))
            case 5:
                guard let session = pick(sessions), let peer = open[session] else { return .started }
                return .silent(session: session, peer: peer.name)
            case 6, 7:
                guard let session = pick(sessions), let peer = open[session] else { return .started }
                let node = Int.random(in: 0..<8, using: &random) == 0 ? pick(Self.members)! : peer.name
                let version = Int.random(in: 0..<6, using: &random) == 0 ? "2" : "1"
                return received(.announce(NodeStateTests.clock(on: node, life: life, version: version)), on: session)
            case 8:
                guard let session = pick(sessions), let peer = open[session] else { return .started }
                return received(.withdraw(NodeStateTests.clock(on: peer.name, life: life).provider), on: session)
            case 9:
                guard let session = pick(sessions) else { return .started }
                return received(.withdrawAck(NodeStateTests.clock(on: "c", life: life).provider), on: session)
            case 10:
                let lives = (1...4).filter { _ in Bool.random(using: &random) }
                return .exports(.available(lives.map { NodeStateTests.clock(on: "c", life: $0) }))
            case 11:
                return .exports(.deadlinePassed(life: life))
            case 12:
                guard let session = pick(sessions) else { return .started }
                let goodbye: WireMessage = switch Int.random(in: 0..<4, using: &random) {
                case 0: .goodbye(reason: "duplicate: a link already exists", duplicate: false)
                case 1: .goodbye(reason: "x", duplicate: true)
                case 2: .goodbye(reason: "decommissioned", leaving: true)
                default: .goodbye(reason: NodeState.idleReason)
                }
                return received(goodbye, on: session)
            case 13:
                let waiting = state.membership.members.values.compactMap { record in
                    record.awaitingReplacement.map { (record.name, $0) }
                }.sorted { $0.0 < $1.0 }
                guard let (member, closed) = pick(waiting) else { return .started }
                return .link(.replacementOverdue(member: member, closed: closed))
            case 14:
                if etcd, Int.random(in: 0..<8, using: &random) == 0 {
                    // A new life under a new lease: the old lease's keys went with it.
                    lease += 1
                    leaseThoughtLost = false
                    keysInEtcd.removeAll()
                    unanswered.removeAll()
                    return .reregistered(at: clock, reason: "a new incarnation")
                }
                clock += .seconds(Int.random(in: 0...8, using: &random))
                let busy = Set(Self.members.filter { _ in Int.random(in: 0..<4, using: &random) == 0 })
                return .idleSweep(at: clock, busy: busy)
            default:
                // A linked member's forget is refused, and changes nothing.
                return .forgotten(name: pick(Self.members)!, relayed: Bool.random(using: &random))
            }
        }

        /// Now and then: a dial on its way fails or reaches a member (now and then another than the one
        /// dialled, or this node itself), a dial's timer fires, or a call to a member needs a link (etcd
        /// mode opens one, `linkWanted`; a call to a member whose link is on its way waits for it).
        mutating func nextDialEvent() -> NodeState.Event? {
            if let attempt = pick(dialling.keys.sorted()), Int.random(in: 0..<3, using: &random) == 0 {
                let address = dialling.removeValue(forKey: attempt)!
                if Int.random(in: 0..<3, using: &random) == 0 {
                    return .dialEnded(attempt: attempt, session: nil, random: Double.random(in: 0...1, using: &random))
                }
                // Members listen at unix:/NAME; a seed or an old address may lead anywhere.
                let owner = Self.members.first { address == "unix:/\($0)" }
                let name = Int.random(in: 0..<5, using: &random) == 0 ? pick(Self.members + ["c"])! : owner ?? pick(Self.members)!
                reached[attempt] = (name, "\(name)\(Int.random(in: 1...2, using: &random))")
                return .dialled(attempt: attempt, address: address, member: name)
            }
            if !dialTimers.isEmpty, Int.random(in: 0..<4, using: &random) == 0 {
                return dialTimers.remove(at: Int.random(in: 0..<dialTimers.count, using: &random))
            }
            guard Int.random(in: 0..<8, using: &random) == 0 else { return nil }
            let member = pick(Self.members)!
            switch state.linkChoice(for: member) {
            case .open:
                linkWaiters[member, default: 0] += 1
                return .linkWanted(member: member)
            case .wait:
                linkWaiters[member, default: 0] += 1
                return nil
            case .use, .gone, .unreachable:
                return nil
            }
        }

        /// etcd mode, now and then: etcd answers a put or a delete (or does not, having carried it out or
        /// not), a retry is due, the keys are brought in line, or the lease is thought lost, kept, or ended.
        mutating func nextKeysEvent() -> ServiceKeys.Event? {
            if let attempt = pick(requests.keys.sorted()), Int.random(in: 0..<4, using: &random) == 0 {
                let request = requests.removeValue(forKey: attempt)!
                // A put under a lease that ended fails, and puts nothing.
                let current = request.lease == lease
                let succeeded = (current || !request.puts) && Int.random(in: 0..<4, using: &random) != 0
                if current, succeeded || Bool.random(using: &random) {
                    if request.puts { keysInEtcd.insert(request.life) } else { keysInEtcd.remove(request.life) }
                }
                if succeeded { unanswered.remove(request.life) } else { unanswered.insert(request.life) }
                return .answered(life: request.life, attempt: attempt, succeeded: succeeded)
            }
            if let life = pick(retries.sorted()), Int.random(in: 0..<5, using: &random) == 0 {
                retries.remove(life)
                return .retry(life: life)
            }
            switch Int.random(in: 0..<40, using: &random) {
            case 0..<4:
                // The driver asks whenever the exports changed; `ServiceKeys` ignores it while it thinks the
                // lease lost.
                return .reconcile
            case 4:
                leaseThoughtLost = true
                return .leaseLost
            case 5:
                leaseThoughtLost = false
                return .leaseKept
            case 6:
                lease += 1
                leaseThoughtLost = false
                keysInEtcd.removeAll()
                unanswered.removeAll()
                return .leaseEnded
            default:
                return nil
            }
        }

        func received(_ message: WireMessage, on session: Int) -> NodeState.Event {
            .received(message, session: session, role: .node)
        }

        /// Does what the node would do with the directives that concern the test's links and exports, and
        /// checks each against what came before.
        mutating func follow(
            _ directives: [NodeState.Directive], owed: Int, liveBefore: Set<Proxies.Key>, disposalEnded: Bool = false,
            context: String
        ) {
            var live = liveBefore
            var acknowledgements = 0
            outstanding += owed
            for directive in directives {
                // Whoever the exports tell has a link in use now (the driver sends on it), or waits for the
                // replacement of one (the exports tell it again when it takes over): nobody is skipped.
                if case .exports(let exportsDirective) = directive, let peers = exportsDirective.peers {
                    for peer in peers where state.membership.session(of: peer) == nil
                        && state.membership.members[peer]?.awaitingReplacement == nil {
                        problems.append("\(context): \(peer) is told \(exportsDirective) with no link in use")
                    }
                }
                switch directive {
                case .dial(let attempt, let address):
                    if dialling.values.contains(address) {
                        problems.append("\(context): \(address) dialled while another dial of it is on its way")
                    }
                    dialling[attempt] = address
                    if !etcd, let session = state.linkInUse(at: address) {
                        problems.append("\(context): \(address) dialled while link \(session) to its member is in use")
                    }
                case .adoptDialled(let attempt):
                    // The shell takes the link (its handshake's event), then reports the dial's end.
                    guard let peer = reached.removeValue(forKey: attempt) else {
                        problems.append("\(context): took the link of dial \(attempt), which reached nobody")
                        continue
                    }
                    nextSession += 1
                    open[nextSession] = peer
                    forced.append(.link(.handshakeCompleted(
                        session: nextSession, side: .initiator, name: peer.name, incarnation: peer.incarnation,
                        addresses: ["unix:/\(peer.name)"])))
                    forced.append(.dialEnded(attempt: attempt, session: nextSession, random: Double.random(in: 0...1, using: &random)))
                case .discardDialled(let attempt, _, _):
                    reached[attempt] = nil
                    forced.append(.dialEnded(attempt: attempt, session: nil, random: Double.random(in: 0...1, using: &random)))
                case .schedule(let timer, _) where timer.isDialTimer:
                    dialTimers.append(timer)
                case .followEvents(let session, let id, _):
                    guard let peer = open[session] else {
                        problems.append("\(context): subscription \(id) sent on link \(session), which is closed")
                        continue
                    }
                    follows[id] = (peer.name, session)
                case .unfollowEvents(let session, let id, _):
                    if follows.removeValue(forKey: id)?.session != session {
                        problems.append("\(context): subscription \(id) ended on link \(session), which it did not go on")
                    }
                case .linkSettled(let member):
                    // Settled with a link in use, or with none on its way: never while one still comes.
                    if linkWaiters.removeValue(forKey: member) != nil, state.linkChoice(for: member) == .wait {
                        problems.append("\(context): calls to \(member) went on while a link to it is still on its way")
                    }
                case .drain(let session, _, _, _):
                    draining.insert(session)
                case .closeIdle(let session, let member):
                    // Only etcd mode closes idle links, and only a member's link in use.
                    if !etcd || state.membership.session(of: member) != session {
                        problems.append("\(context): closed link \(session) as \(member)'s idle link")
                    }
                case .link(.refuse(let session, _)):
                    open[session] = nil
                case .exports(.withdraw(let provider, let peers)):
                    let begins = directives.contains(.exports(.armDeadline(life: provider.life, after: NodeStateTests.withdrawTimeout)))
                    if !withdrawing.contains(provider.life) && !begins {
                        problems.append("\(context): life \(provider.life) withdrawn with no withdrawal under way")
                    } else if let already = told[provider.life] {
                        // Sent again on a replaced link: only to members told already, and still awaited.
                        let awaiting = state.exports.export(life: provider.life)?.withdrawal?.awaiting ?? []
                        if !Set(peers).isSubset(of: already) || !Set(peers).isSubset(of: awaiting) {
                            problems.append("\(context): life \(provider.life) withdrawn again from \(peers)")
                        }
                    } else {
                        told[provider.life] = Set(peers)
                        // etcd mode: the key goes first (nor may a put of it be on its way), unless etcd did not
                        // answer its delete, the deadline passed first (the release follows at once), or the lease
                        // is thought lost.
                        let releasedNow = directives.contains { directive in
                            if case .exports(.release(let released, _)) = directive { released.life == provider.life } else { false }
                        }
                        let putComing = requests.values.contains { $0.life == provider.life && $0.puts && $0.lease == lease }
                        if keysInEtcd.contains(provider.life) || putComing, !unanswered.contains(provider.life), !releasedNow,
                           !leaseThoughtLost {
                            problems.append("\(context): life \(provider.life)'s withdrawal told while its key is in etcd or on its way")
                        }
                    }
                case .keys(.put(let life, _, _, let attempt)), .keys(.delete(let life, _, let attempt)):
                    // One request per key at a time: two on their way could land in either order.
                    if requests.values.contains(where: { $0.life == life }) {
                        problems.append("\(context): a second request for life \(life)'s key while one is on its way")
                    }
                    var puts = false
                    if case .keys(.put) = directive { puts = true }
                    requests[attempt] = (life, puts, lease)
                case .schedule(.keys(.retry(let life)), _):
                    retries.insert(life)
                case .exports(.hold(let provider)):
                    if !held.insert(provider.life).inserted { problems.append("\(context): life \(provider.life) held twice") }
                case .exports(.release(let provider, let outcome)):
                    if held.remove(provider.life) == nil {
                        problems.append("\(context): life \(provider.life) released while not held")
                    }
                    // A life told to nobody is released as it leaves; any other once its withdrawal ends.
                    if (withdrawing.remove(provider.life) == nil) != (outcome == .noPeers) {
                        problems.append("\(context): life \(provider.life) released \(outcome) with a withdrawal under way or none")
                    }
                    // Released before its deadline only once every member told has acknowledged or was lost, and
                    // acknowledged only by members told (etcd mode tells once the key is gone: members lost
                    // before that were never told).
                    let toldLife = told[provider.life] ?? []
                    if case .finished(let acknowledged, let lost) = outcome,
                       !toldLife.isSubset(of: Set(acknowledged).union(lost)) || !Set(acknowledged).isSubset(of: toldLife)
                        || !Set(acknowledged).isDisjoint(with: lost) {
                        problems.append(
                            "\(context): life \(provider.life) released with \(acknowledged) acknowledged and \(lost) lost "
                                + "of \(told[provider.life]?.sorted() ?? [])")
                    }
                    told[provider.life] = nil
                    if deadlines.contains(provider.life) {
                        problems.append("\(context): life \(provider.life) released with its deadline still armed")
                    }
                case .exports(.armDeadline(let life, let delay)):
                    // Armed as the withdrawal begins (its members may be told later, in etcd mode).
                    if !withdrawing.insert(life).inserted || !deadlines.insert(life).inserted || delay != NodeStateTests.withdrawTimeout {
                        problems.append("\(context): life \(life)'s deadline armed twice, outside a withdrawal or for \(delay)")
                    }
                case .exports(.cancelDeadline(let life)):
                    if deadlines.remove(life) == nil {
                        problems.append("\(context): life \(life)'s deadline cancelled while not armed")
                    }
                case .proxies(.create(let key, _, _)):
                    if !live.insert(key).inserted { problems.append("\(context): a second proxy of \(key)") }
                case .proxies(.dispose(let key, let id, _)):
                    if live.remove(key) == nil { problems.append("\(context): disposed \(key), which did not exist") }
                    if disposing.updateValue(key, forKey: id) != nil { problems.append("\(context): disposal \(id) issued twice") }
                case .proxies(.acknowledge(let ack)):
                    acknowledgements += 1
                    // Only the end of a disposal acknowledges while a proxy of that provider life is unloading.
                    let incarnation = state.membership.members[ack.provider.node]?.incarnation
                    let unloading = disposing.values.contains {
                        $0.node == ack.provider.node && $0.incarnation == incarnation && $0.life == ack.provider.life
                            && $0.service == ack.provider.service
                    }
                    if unloading, !disposalEnded {
                        problems.append("\(context): \(ack.provider) acknowledged while its proxy's consumers unload")
                    }
                default:
                    break
                }
            }
            if live != state.proxies.live {
                problems.append("\(context): the proxies moved without directives (\(live) against \(state.proxies.live))")
            }
            // Every acknowledgement owed is sent, once, or waits for a disposal under way; none is sent early.
            outstanding -= acknowledgements
            let waiting = state.proxies.disposals.values.reduce(0) { $0 + $1.owed.count }
            if outstanding != waiting {
                problems.append("\(context): \(outstanding) acknowledgements owed, \(waiting) waiting for a disposal")
            }
        }

        mutating func check(_ directives: [NodeState.Directive], awaitingBefore: [String: Int], context: String) {
            // etcd mode: a key etcd holds is one this node knows of (wanted, there, or on its way to be deleted):
            // none is left behind.
            if let keys = state.keys {
                for life in keysInEtcd.sorted() where keys.entries[life] == nil {
                    problems.append("\(context): life \(life)'s key is left in etcd")
                }
            }
            // The indexes the machines keep beside their tables match them.
            if !state.proxies.disposalsMatchKeys { problems.append("\(context): the proxies' disposals by key are stale") }
            if !state.exports.slotsMatchExports { problems.append("\(context): the exports' lives by slot are stale") }
            // The links drained are those `NodeState` said to drain, until they closed.
            if draining != state.drained {
                problems.append("\(context): drained \(state.drained.sorted()), where \(draining.sorted()) were drained")
            }
            // At most one link in use per member, each a link the test holds for that member's life.
            var inUse: [Int: String] = [:]
            for record in state.membership.members.values {
                guard let link = record.link?.session else { continue }
                if let other = inUse[link] { problems.append("\(context): link \(link) in use for \(other) and \(record.name)") }
                inUse[link] = record.name
                if let peer = open[link], peer.name != record.name || peer.incarnation != record.incarnation {
                    problems.append("\(context): \(record.name)'s link \(link) belongs to \(peer)")
                }
            }
            // No proxy of a life that is over (the mesh ends a life with its link; a replaced duplicate does not).
            if !etcd {
                for key in state.proxies.live {
                    let record = state.membership.members[key.node]
                    guard let record, record.incarnation == key.incarnation,
                          record.isLinked || record.awaitingReplacement != nil
                    else {
                        problems.append("\(context): a proxy of \(key.node)'s life \(key.incarnation), which is over")
                        continue
                    }
                }
            }
            // Each member whose link is in use is followed once per operator with a cluster-wide subscriber,
            // by a subscription sent on that link; nobody else is followed.
            let operators = Set(state.subscriptions.subscribers.filter(\.cluster).map(\.operator))
            var expected: Set<Subscriptions.Upstream> = []
            for member in state.membership.linkedNames {
                for identity in operators { expected.insert(Subscriptions.Upstream(member: member, operator: identity)) }
            }
            if Set(state.subscriptions.followed.keys) != expected {
                problems.append("\(context): following \(state.subscriptions.followed.keys.map(\.member).sorted()), expected \(expected.map(\.member).sorted())")
            }
            for (upstream, id) in state.subscriptions.followed {
                if let sent = follows[id], sent.member == upstream.member, sent.session == state.membership.session(of: upstream.member) { continue }
                problems.append("\(context): \(upstream.member) followed as \(id), not sent on its link in use (\(follows[id].map { "\($0)" } ?? "never sent"))")
            }
            // No call waits for a link with none on its way (the replacement of a duplicate, a dial on
            // demand): once a link is in use, or nothing is on its way any more, the waiters go on.
            for member in linkWaiters.keys.sorted() where state.linkChoice(for: member) != .wait {
                problems.append("\(context): \(linkWaiters[member]!) calls to \(member) wait with no link on its way (\(state.linkChoice(for: member)))")
            }
            // No call waits for a replacement link once the wait is over: whenever a member stops waiting,
            // the calls waiting for it are settled in the same step.
            for (member, _) in awaitingBefore where state.membership.members[member]?.awaitingReplacement == nil {
                if !directives.contains(.linkSettled(member: member)) {
                    problems.append("\(context): \(member)'s wait for a replacement ended with calls left waiting")
                }
            }
        }

        /// Ends every disposal still under way, then stops the node and ends every withdrawal still under way
        /// at its deadline: each is released once, no acknowledgement is left owed and no teardown held.
        mutating func finish() {
            for id in disposing.keys.sorted() {
                disposing[id] = nil
                follow(
                    state.receive(.proxyDisposed(id)), owed: 0, liveBefore: state.proxies.live, disposalEnded: true,
                    context: "disposal \(id) ends")
            }
            if outstanding != 0 { problems.append("\(outstanding) acknowledgements never sent") }
            follow(state.receive(.exports(.stopping)), owed: 0, liveBefore: state.proxies.live, context: "stopping")
            for life in withdrawing.sorted() {
                deadlines.remove(life)
                let directives = state.receive(.exports(.deadlinePassed(life: life)))
                follow(directives, owed: 0, liveBefore: state.proxies.live, context: "deadline of \(life)")
            }
            if !withdrawing.isEmpty { problems.append("withdrawals never released: \(withdrawing.sorted())") }
            if !state.heldWithdrawals.isEmpty { problems.append("withdrawals never told: \(state.heldWithdrawals.keys.sorted())") }
            if !deadlines.isEmpty { problems.append("deadlines left armed: \(deadlines.sorted())") }
            if !held.isEmpty { problems.append("teardowns held after the stop: \(held.sorted())") }
        }
    }

    @Test("Mesh and etcd mode, random steps: one link per member, no proxy of a dead life, every life shared held until its withdrawal is released, once (before its deadline only when every member told acknowledged or was lost) with its deadline cancelled or passed once, every withdrawal acknowledged once, no call left waiting", arguments: [false, true])
    func randomSequences(etcd: Bool) {
        for seed in Self.seeds {
            var world = World(seed: seed, etcd: etcd)
            for number in 0..<400 where world.problems.isEmpty {
                world.step(number)
            }
            world.finish()
            #expect(world.problems.isEmpty, "seed \(seed): \(world.problems.prefix(3))")
            if !world.problems.isEmpty { return }
        }
    }
}

extension NodeState.Event {
    /// Whether the event is a dial's timer (a backoff or a re-dial).
    fileprivate var isDialTimer: Bool {
        switch self {
        case .dialDue, .redialDue: true
        default: false
        }
    }
}

extension Exports.Directive {
    /// The members the directive sends to, if it sends.
    fileprivate var peers: [String]? {
        switch self {
        case .announce(_, let peers), .withdraw(_, let peers): peers
        default: nil
        }
    }
}
