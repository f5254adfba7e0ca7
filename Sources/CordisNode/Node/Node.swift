import Cordis
import CordisDiscovery
import CordisWire
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// A cluster node: a plugin world and its Loader, listeners and links to the other members, and the
/// remote services it shares with them.
///
/// A local provider of a service in the `RemoteServiceCatalog` is announced to every peer; a peer's
/// announcement becomes a proxy fiber here that provides the service as a fallback, so consumers
/// inject it like a local one. A withdrawal is orderly (peers unload their consumers and acknowledge
/// before the provider's own teardown runs); a lost member withdraws at once.
///
/// The node decides nothing about its links or exports itself: it feeds events to three state machines,
/// `Membership` (which link stands for a member), its `MemberDiscovery` (how members are found and
/// when a life is over: the embedded mesh's `MeshGossip`, or etcd's `EtcdDirectory`) and `Exports`
/// (what is announced and withdrawn, per provider life, and when a withdrawal's deadline is armed or
/// cancelled), and carries out their directives, the same way in both modes.
/// All members are isolated to `CordisActor`; socket I/O and timers run on the node's `EventLoop`.
@CordisActor
public final class Node {
    /// The node's settings.
    public let configuration: NodeConfiguration
    /// The root context of the node's plugin world.
    public let context: Context
    /// The node's Loader.
    public let loader: Loader
    /// The services it can share.
    public let remoteServices: RemoteServiceCatalog
    let loop: EventLoop
    /// Writes log lines a peer can repeat at will, rate-limited per kind.
    let throttle: LogThrottle
    /// The node's logger (the one its throttle writes to).
    var logger: Logger { throttle.logger }

    /// The node's name.
    public var name: String { configuration.name }

    /// Every session by id, and the calls waiting for a member's replacement link. Which link stands
    /// for a member is `NodeState`'s to say (`link(to:)`).
    var peers = PeerSessions()
    /// Every cluster decision: membership, discovery, exports, proxies and who may send what.
    var state: NodeState
    /// The fibers, holds and timers the exports' and proxies' directives act on.
    var remote = RemoteHandles()
    /// Whether the node runs, and the short work it started (a request, a disposal, an etcd put),
    /// each held until it ends: `stop` waits for what is left.
    let activity = NodeActivity()
    /// Whether the node runs (between `start` and `stop`).
    var running: Bool {
        get { activity.isRunning }
        set { activity.isRunning = newValue }
    }
    /// The listeners, their accept loops and the diallers.
    var linking = Linking()
    /// What handshakes read off the actor: the configuration accepted connections run with (kept
    /// current by `refreshHandshake()`, nil while the node is not running) and the linked members' lives.
    let handshake = AcceptedHandshake()
    /// The messages of every link and of the etcd client, by kind (the `traffic` command).
    let traffic = TrafficCounter()
    /// The control API served to consoles and members (`Control/`), created on first use.
    private(set) lazy var control = ControlServer(node: self)
    /// etcd mode's state and driver (`Discovery/`), nil for the embedded mesh.
    var etcd: EtcdMode?

    /// Creates a node; `start()` brings it up.
    ///
    /// - Throws: `TransportError` when the event loop cannot be created.
    public init(
        configuration: NodeConfiguration, catalog: PluginCatalog, remoteServices: RemoteServiceCatalog,
        store: any EntryStore, context: Context = Context()
    ) throws {
        self.configuration = configuration
        self.context = context
        self.remoteServices = remoteServices
        self.loader = Loader(ctx: context, catalog: catalog, store: store)
        let logger = context.logger("node")
        let throttle = LogThrottle(logger: logger)
        // Transport events (a stale socket file reclaimed, a peer refused by its credentials, a failed
        // accept) are logged, each kind rate-limited (a peer can repeat them at will); closed connections
        // are already reported by the sessions.
        self.loop = try EventLoop(
            observer: { event in
                switch event.kind {
                case .connectionClosed: break
                case .staleSocketReclaimed: logger.info(event.message)
                default: throttle.log(.warn, kind: event.kind.rawValue, "\(event.kind): \(event.message)")
                }
            }, name: "cordis-\(configuration.name)")
        throttle.attach(loop)
        self.throttle = throttle
        let interfaces = remoteServices.services.mapValues { Proxies.Interface(name: $0.interface, version: $0.version) }
        var limits = Admission.Limits(total: configuration.connectionBudget, perConsoleIdentity: configuration.consoleBudget.links)
        limits.requestsPerConsoleIdentity = configuration.consoleBudget.requests
        limits.followsPerConsoleIdentity = configuration.consoleBudget.follows
        self.state = Self.state(
            of: configuration, discovery: MeshGossip(name: configuration.name, ownAddresses: [], seeds: []),
            interfaces: interfaces, limits: limits)
        if !configuration.etcdEndpoints.isEmpty {
            state = Self.state(of: configuration, discovery: EtcdDirectory(name: configuration.name), interfaces: interfaces, limits: limits)
            etcd = EtcdMode(
                node: self, client: EtcdClient(endpoints: configuration.etcdEndpoints, loop: loop, traffic: traffic),
                incarnation: configuration.incarnation,
                leaseTTL: configuration.leaseTTL)
        }
    }

    /// The cluster state of a node with `configuration`, finding members through `discovery`.
    private static func state(
        of configuration: NodeConfiguration, discovery: any MemberDiscovery, interfaces: [String: Proxies.Interface],
        limits: Admission.Limits
    ) -> NodeState {
        NodeState(
            name: configuration.name, discovery: discovery, interfaces: interfaces, limits: limits, ownUID: geteuid(),
            withdrawTimeout: configuration.withdrawTimeout, callTimeout: configuration.callTimeout,
            handshakeTimeout: LinkOptions().handshakeTimeout, idleTimeout: configuration.idleLinkTimeout,
            leaseTTL: configuration.leaseTTL, reconnectBackoff: configuration.reconnectBackoff)
    }

    /// The real addresses of the listeners (with the port picked for port 0).
    public var listeningAddresses: [Address] { linking.listeners.map(\.address) }

    /// The addresses this node advertises.
    public var advertisedAddresses: [String] {
        let chosen = configuration.advertise.isEmpty ? listeningAddresses : configuration.advertise
        return chosen.map(\.description)
    }

    /// The names of the members with a live link.
    public var connectedPeers: [String] { state.membership.linkedNames }

    /// The link in use to `member`, if it is linked.
    func link(to member: String) -> PeerSession? {
        state.membership.session(of: member).flatMap { peers[$0] }
    }

    /// Interface mismatches, by service name: why consumers stay pending.
    public var mismatches: [String: String] { state.proxies.mismatchReasons }

    // MARK: - Lifecycle

    /// Listens (on `configuration.listen` plus `adopted` file descriptors), starts the Loader, then
    /// dials the seeds. Returns once the Loader has settled and the listeners are up.
    ///
    /// - Throws: `TransportError` (`addressInUse`…) from listening; the Loader's errors.
    public func start(adopting adopted: [Int32] = []) async throws {
        let listenerCount = adopted.isEmpty ? configuration.listen.count : adopted.count
        let options = ListenerOptions(
            limits: limits, maxConnections: max(1, configuration.connectionBudget / max(1, listenerCount)),
            policy: configuration.peerPolicy, socketGroup: configuration.socketGroup, tls: configuration.tls)
        for fd in adopted {
            linking.listeners.append(try loop.adoptListener(fd: fd, options: options))
        }
        if adopted.isEmpty {
            for address in configuration.listen {
                linking.listeners.append(try loop.listen(on: address, options: options))
            }
        }
        if let refusal = ListenerSecurity.refusal(
            listeningOn: listeningAddresses, secured: configuration.secrets != nil || configuration.tls != nil,
            insecureAllowed: configuration.allowsInsecureTCP)
        {
            linking.discardListeners()
            throw NodeStartError(refusal)
        }
        if etcd == nil {
            state = Self.state(
                of: configuration,
                discovery: MeshGossip(
                    name: name, ownAddresses: advertisedAddresses + listeningAddresses.map(\.description),
                    seeds: configuration.peers.map(\.description)),
                interfaces: state.proxies.interfaces, limits: state.admission.limits)
        } else {
            do {
                if let etcd {
                    try await etcd.register(retryingFor: .seconds(30))
                    carryOut(state.receive(.lease(.registered(at: .now))))
                }
            } catch {
                linking.discardListeners()
                throw error
            }
        }
        running = true
        // Exports follow the service registry: a provider appearing, leaving, or changing availability
        // (its fiber's state, its `check`) changes the provider its slot resolves to.
        remote.registryListener = try context.onServiceSlot { [weak self] slot in self?.refreshExports(in: slot) }
        try control.startEventStream()
        try await loader.start()
        refreshHandshake()
        let operators = control.operators
        let throttle = self.throttle
        let linkOptions = self.linkOptions
        let handshake = self.handshake
        for listener in linking.listeners {
            linking.acceptors.append(Task { [weak self] in
                await Self.accept(
                    from: listener, handshake: handshake, operators: operators, throttle: throttle, options: linkOptions
                ) { link in
                    Task { @CordisActor in
                        guard let self, self.running else { return link.close() }
                        self.adopt(link)
                    }
                }
            })
        }
        refreshExports()
        carryOut(state.receive(.started))
        etcd?.beginDiscovery()
    }

    /// Stops in order: every export is withdrawn at once (remote consumers acknowledge, or the
    /// withdrawal deadline passes), every entry's fiber is disposed, peers get `goodbye`, links and
    /// listeners close, the event loop stops. A started node must be stopped: until then the teardown of
    /// every provider it shares is held for its withdrawal.
    public func stop() async {
        guard running else { return }
        exportsChanged(.stopping)
        await withdrawalsFinished()
        await loader.stop()
        await etcd?.endDiscovery()
        running = false
        refreshHandshake()
        peers.endEveryLinkWait()
        linking.closeListeners()
        for session in peers.all {
            session.link.close(reason: "node \(name) is stopping")
        }
        linking.cancelTasks()
        control.memberHealthWatch?.cancel()
        await activity.finish()
        await loop.shutdown()
    }

    /// Test support: ends the node as a crash would: listeners and links cut, nothing withdrawn.
    func crashForTesting() {
        running = false
        refreshHandshake()
        for task in etcd?.tasks ?? [] { task.cancel() }
        linking.closeListeners()
        for session in peers.all { session.link.close() }
        linking.cancelTasks()
        control.memberHealthWatch?.cancel()
        activity.abandon()
        // Nothing is withdrawn, but no provider's teardown stays held by a node that is gone.
        for hold in remote.holds.values { hold.release() }
        remote.holds.removeAll()
    }

    /// The operators file in force (replaced on SIGHUP by `reloadOperators()`).
    public var operatorTable: OperatorTable { control.operators }

    /// Re-reads the operators file (SIGHUP). A file that cannot be read or parsed is refused and the
    /// one in force stays.
    ///
    /// - Throws: `OperatorsFileError`.
    public func reloadOperators() throws {
        try control.reloadOperators()
    }

    /// SIGHUP: re-reads the operators file, the trusted keys, the TLS files, then the entries file (refused, and logged, under
    /// `--require-signed-trees`, where only signed trees change the node). Whatever cannot be read
    /// is refused and logged; the node keeps running as it was.
    public func reloadOnSignal() async {
        do {
            try control.reloadOperators()
        } catch {
            logger.error("operators reload refused, the previous operators stay in force: \(error)")
        }
        control.reloadTrustedKeys()
        if let tls = configuration.tls {
            do {
                try NodeTLS.reload(tls, for: name)
                logger.info("reloaded the TLS certificate, key and CA files; new links use them")
            } catch {
                logger.error("TLS files not reloaded, the previous certificate and CAs stay in use: \(error.message)")
            }
        }
        if configuration.security.requireSignedTrees {
            logger.warn(
                "reload of the entries file refused: \(name) accepts only signed trees (--require-signed-trees)",
                fields: [("CORDIS_OPERATOR", "signal")])
            return
        }
        do {
            try await loader.reload()
            logger.info("reloaded the entries file")
        } catch {
            logger.error("reload refused, still running as before: \(error)")
        }
    }

    var limits: ConnectionLimits {
        var limits = ConnectionLimits()
        limits.maxFrameSize = configuration.maxFrameSize
        return limits
    }

    // MARK: - Handshake

    var identity: PeerIdentity {
        PeerIdentity(
            role: .node, name: name, incarnation: liveIncarnation, addresses: advertisedAddresses,
            capabilities: ["remote-services", PeerIdentity.maxFrameCapability(configuration.maxFrameSize)])
    }

    /// The handshake's configuration: this node's identity, secrets and TLS, refusing early a name held
    /// by a live member (it reads the members linked at that moment; admission is decided again,
    /// authoritatively, at adoption).
    func handshakeConfiguration() -> HandshakeConfiguration {
        handshake.refusingLiveNames(ownHandshake)
    }

    /// This node's identity, secrets and TLS for a handshake, refusing no one by itself.
    private var ownHandshake: HandshakeConfiguration {
        HandshakeConfiguration(identity: identity, secrets: configuration.secrets, tls: configuration.tls)
    }

    var linkOptions: LinkOptions {
        LinkOptions(maxFrameSize: configuration.maxFrameSize, traffic: traffic)
    }

    // MARK: - Accepting and dialling

    /// Takes the handshake configuration of the node as it is now for the connections accepted from now
    /// on (at start and stop, and when etcd mode registers a new incarnation).
    func refreshHandshake() {
        handshake.configuration = running ? ownHandshake : nil
    }

    /// Accepts connections and starts each one's handshake on the event loop, off the actor and with no
    /// task of its own: a busy runtime never delays a peer's handshake, and a connection the listener
    /// sheds costs no more than its socket. Only an established link comes to the actor (`adopt`).
    /// Ends when the listener closes.
    @concurrent private nonisolated static func accept(
        from listener: Listener, handshake: AcceptedHandshake, operators: OperatorTable,
        throttle: LogThrottle, options: LinkOptions, adopt: @escaping @Sendable (Link) -> Void
    ) async {
        for await connection in listener.connections {
            guard let base = handshake.configuration else {
                connection.close()
                continue
            }
            let configuration = ControlServer.admittingPeers(base, on: connection, operators: operators, throttle: throttle)
            Link.startHandshake(connection, side: .responder, configuration: configuration, options: options) { outcome in
                switch outcome {
                case .success(let link):
                    adopt(link)
                case .failure(let error as TransportError) where error.code == .handshakeShed:
                    // The listener reported it (rate-limited) when it shed the connection.
                    break
                case .failure(let error as TransportError) where error.code == .tls:
                    throttle.log(.warn, kind: "tlsRefused", "TLS link from \(connection.origin) refused: \(error.message)")
                case .failure(let error):
                    throttle.log(.info, kind: "handshakeFailed", "handshake from \(connection.origin) failed: \(error)")
                }
            }
        }
    }

    /// Dials `address` once, as attempt `attempt` of `NodeState`'s: reports the peer its handshake named
    /// (`NodeState` then says whether to take the link), or the failure.
    private func dial(_ address: String, attempt: Int) {
        guard running, let parsed = try? Address(parsing: address) else { return }
        linking.dials[attempt] = Task { [weak self] in
            do {
                guard let self else { return }
                let link = try await Link.connect(
                    to: parsed, on: self.loop, configuration: self.handshakeConfiguration(), limits: self.limits,
                    options: self.linkOptions)
                self.linking.dials[attempt] = nil
                guard self.running, !Task.isCancelled else {
                    link.close(reason: "\(self.name) stopped dialling \(address)")
                    return
                }
                self.linking.dialled[attempt] = link
                self.carryOut(self.state.receive(.dialled(attempt: attempt, address: address, member: link.peer.name)))
            } catch {
                guard let self else { return }
                self.linking.dials[attempt] = nil
                if let refusal = Self.tlsRefusal(error) {
                    self.throttle.log(.warn, kind: "tlsRefused", "TLS link to \(address) refused: \(refusal)")
                } else {
                    self.logger.debug("dialling \(address) failed: \(error)")
                }
                guard self.running, !Task.isCancelled else { return }
                self.carryOut(self.state.receive(.dialEnded(attempt: attempt, session: nil, random: Double.random(in: 0...1))))
            }
        }
    }

    /// Takes the link of dial attempt `attempt` (`adopt`), or closes it saying `goodbye` (logging why),
    /// as `NodeState` said; then reports how the dial ended.
    private func settleDialled(_ attempt: Int, closing close: (reason: String, goodbye: String)? = nil) {
        guard let link = linking.dialled.removeValue(forKey: attempt) else { return }
        var session: PeerSession?
        if let close {
            logger.debug("closing a link dialled: \(close.reason)")
            link.close(reason: close.goodbye)
        } else {
            session = adopt(link)
        }
        carryOut(state.receive(.dialEnded(attempt: attempt, session: session?.id, random: Double.random(in: 0...1))))
    }

    /// Why a dial failed, when TLS is the reason (a certificate refused, one side without TLS), so it
    /// is logged as a warning rather than as a routine redial.
    nonisolated static func tlsRefusal(_ error: any Error) -> String? {
        if let error = error as? TransportError, error.code == .tls { return error.message }
        if let error = error as? WireError, error.code == .rejected, error.peerCode == .tlsRequired {
            return error.message + " (this node has no TLS configured)"
        }
        return nil
    }

    // MARK: - Links

    /// Takes an established link to `Membership` (or, for a console, into use); returns its session
    /// when the link is kept.
    @discardableResult
    func adopt(_ link: Link) -> PeerSession? {
        let peer = link.peer
        let session = peers.open { PeerSession(id: $0, link: link, node: self) }
        let holder: Admission.Holder
        if peer.role == .console {
            let identity = control.operatorIdentity(of: link)
            holder = .console(identity: identity.name, role: control.operators.role(of: identity))
        } else {
            holder = .member(peer.name)
        }
        carryOut(state.receive(.established(session: session.id, holder: holder, peerUID: link.peerUID)))
        guard peers[session.id] != nil else { return nil }
        if peer.role == .console {
            // Anyone admitted may connect and close at will: the line is rate-limited like a refusal.
            throttle.log(.info, kind: "consoleConnected", "console \(peer.name) connected", fields: [("CORDIS_PEER", peer.name)])
            session.run()
            return session
        }
        carryOut(state.receive(.link(.handshakeCompleted(
            session: session.id, side: link.side, name: peer.name, incarnation: peer.incarnation,
            addresses: peer.addresses))))
        return peers[session.id]
    }

    /// A session's link closed.
    func sessionEnded(_ session: PeerSession) {
        guard peers[session.id] === session else { return }
        defer { peers.remove(session.id) }
        // What the link held itself ends; what it stood for, `NodeState` says.
        control.linkClosed(session)
        if session.role == .console { HeapTrim.soon(on: loop) }
        carryOut(state.receive(.link(.linkClosed(session: session.id))))
    }

    /// A session's link stopped answering heartbeats.
    func heartbeatMissed(_ session: PeerSession) {
        carryOut(state.receive(.silent(session: session.id, peer: session.identity.name)))
    }

    /// Carries out what `NodeState` decided, in order.
    ///
    /// When exports changed (or `exportsChanged` says they may have, without a directive), what follows
    /// from them is settled once at the end: records dropped, etcd keys, waiters for withdrawals.
    func carryOut(_ directives: [NodeState.Directive], exportsChanged: Bool = false) {
        var exportsTouched = exportsChanged
        defer { if exportsTouched { exportsSettled() } }
        for directive in directives {
            switch directive {
            case .link(let link): carryOut(link)
            case .memberLost(let member, let incarnation, let link, let inOrder):
                memberLost(member, incarnation: incarnation, link: link.flatMap { peers[$0] }, inOrder: inOrder)
            case .discovery(let discovery): carryOut(discovery)
            case .exports(let exports):
                exportsTouched = true
                carryOut(exports)
            case .keys(let keys): etcd?.carryOut(keys)
            case .lease(let lease): etcd?.carryOut(lease)
            case .proxies(let proxies): carryOut(proxies)
            case .retired(let id): if let session = peers[id] { retire(session) }
            case .drain(let id, let member, let goodbye, let deadline):
                guard let session = peers[id] else { continue }
                if goodbye != nil {
                    logger.debug("closing a duplicate link to \(member)", fields: [("CORDIS_PEER", member)])
                } else {
                    logger.debug("\(member) closes a link as a duplicate: draining it", fields: [("CORDIS_PEER", member)])
                }
                session.drain(goodbye: goodbye, deadline: deadline)
            case .schedule(let event, let delay):
                _ = loop.schedule(after: delay) { [weak self] in
                    Task { @CordisActor in
                        guard let self, self.running else { return }
                        self.carryOut(self.state.receive(event))
                    }
                }
            case .closeIdle(let id, let member):
                logger.debug("closing the idle link to \(member)", fields: [("CORDIS_PEER", member)])
                peers[id]?.link.close(reason: NodeState.idleReason)
            case .linkSettled(let member): peers.endLinkWait(of: member, with: running ? link(to: member) : nil)
            case .dial(let attempt, let address): dial(address, attempt: attempt)
            case .adoptDialled(let attempt): settleDialled(attempt)
            case .discardDialled(let attempt, let reason, let goodbye): settleDialled(attempt, closing: (reason, goodbye))
            case .notAdmitted(let id, let reason):
                guard let session = peers.remove(id) else { continue }
                throttle.log(
                    .warn, kind: "notAdmitted", "refused a link from \(session.identity.name): \(reason)",
                    fields: [("CORDIS_PEER", session.identity.name)])
                session.link.close(reason: "\(WireError.Code.notAdmitted.spelled(for: session.link.handshake.version)): \(reason)")
            case .serve(let message, let id): if let session = session(id) { serve(message, from: session) }
            case .drop(let message, let id, let reason): session(id)?.drop(message, because: reason)
            case .followEvents(let id, let subscription, let requester):
                if let session = peers[id] { control.followEvents(on: session, id: subscription, for: requester) }
            case .unfollowEvents(let id, let subscription, let request):
                if let session = peers[id] { control.unfollowEvents(on: session, id: subscription, request: request) }
            case .memberHealthChanged(let change): control.publish(change)
            case .forgetRefused, .forgot:
                // The control API's `forget` answers the operator and passes the request on.
                break
            case .saidGoodbye(let id, let reason, let leaving):
                guard let peer = session(id)?.identity.name else { continue }
                logger.info("\(peer) said goodbye: \(reason ?? "")")
                if leaving { logger.info("\(peer) left the cluster", fields: [("CORDIS_PEER", peer)]) }
            }
        }
    }

    /// The session of `id`: a link to a member (in use, standby or drained) or a console's.
    func session(_ id: Int) -> PeerSession? { peers[id] }

    /// Carries out a link directive of `Membership`.
    private func carryOut(_ directive: Membership.Directive) {
        switch directive {
        case .adopt(let id, let member, let restarted):
            guard let session = peers[id] else { return }
            let incarnation = session.identity.incarnation
            if restarted {
                logger.info("\(member) restarted (incarnation \(incarnation))", fields: [("CORDIS_PEER", member)])
            }
            handshake.setLive(member, incarnation)
            logger.info("linked to \(member)", fields: [("CORDIS_PEER", member)])
            session.run()
        case .keepStandby(let id, let member):
            logger.debug("keeping a second link to \(member) until \(member) closes one", fields: [("CORDIS_PEER", member)])
            peers[id]?.run()
        case .promote(let id, let member):
            guard let session = peers[id] else { return }
            logger.debug("the second link to \(member) is now the one in use", fields: [("CORDIS_PEER", member)])
            session.run()
        case .refuse(let id, let reason):
            guard let session = peers.remove(id) else { return }
            logger.warn(
                "refused a link from \(session.identity.name): \(reason)", fields: [("CORDIS_PEER", session.identity.name)])
            session.link.close(reason: "\(WireError.Code.nameTaken.spelled(for: session.link.handshake.version)): \(reason)")
        case .awaitReplacement(let member, _):
            // The drained link takes no new calls; none go to the member while the replacement comes (its
            // deadline is a `schedule` directive).
            logger.debug("\(member) closed the link in use as a duplicate: waiting for the other link", fields: [("CORDIS_PEER", member)])
        case .close(let id, let reason):
            peers[id]?.link.close(reason: reason)
        case .withdrawAll, .drain, .closeDuplicate:
            // `NodeState` turns a member's loss into `memberLost` and the drains into `drain`.
            break
        }
    }

    /// Carries out what the `MemberDiscovery` asked of the node (proxies went to `Proxies` already).
    private func carryOut(_ directive: DiscoveryDirective) {
        switch directive {
        case .sendMembers(let member):
            link(to: member)?.send(.members(members))
        case .memberGone(let member, let incarnation):
            etcd?.memberLeftDirectory(member, incarnation: incarnation)
        case .restoreOwnKey:
            etcd?.restoreOwnMemberKey()
        case .ignoredUnknownKeys(let example):
            logger.info("etcd holds keys under cordis/ that no node uses (such as \(example.prefix(200))): ignored")
        case .dropProxies, .offer, .retract, .dial, .stopDialling, .redial:
            // `NodeState` hands these to `Proxies` and to its dials.
            break
        }
    }

    /// Serves a message `NodeState` let through: a call, cancel, request, response or event.
    private func serve(_ message: WireMessage, from session: PeerSession) {
        switch message {
        case .call(let call):
            if session.role == .console { control.serveConsoleCall(call, from: session) } else { serve(call, from: session) }
        case .cancel(let callID): session.cancelServing(callID)
        case .request(let request): control.serve(request, from: session)
        case .response(let response):
            control.completeRelay(response, from: session)
            session.reportIfDrainedIdle()
        case .event(let event): control.forwardEvent(event, from: session)
        default: break
        }
    }

    /// The session of the link `NodeState` chooses for a call to `member`: the link in use; while one is
    /// on its way (the replacement of a link closed as a duplicate, a dial on demand), that one once it
    /// is up; with none, in etcd mode, a new one (`linkWanted`: `NodeState` dials the addresses etcd
    /// lists, at most one dial per member at a time). Nil when it cannot be reached.
    func openLink(to member: String) async -> PeerSession? {
        guard running else { return nil }
        switch state.linkChoice(for: member) {
        case .use(let id): return peers[id]
        case .wait: return await withCheckedContinuation { peers.awaitLink(to: member, $0) }
        case .open:
            return await withCheckedContinuation { waiter in
                peers.awaitLink(to: member, waiter)
                carryOut(state.receive(.linkWanted(member: member)))
            }
        case .gone, .unreachable: return nil
        }
    }

    /// A member's link in use is gone: its calls fail and its relays end (what else follows, `NodeState`
    /// decided).
    private func memberLost(_ member: String, incarnation: String, link session: PeerSession?, inOrder: Bool) {
        if let session { retire(session) }
        handshake.setLive(member, nil)
        if inOrder {
            logger.debug("idle link to \(member) closed", fields: [("CORDIS_PEER", member)])
        } else {
            logger.info("link to \(member) lost", fields: [("CORDIS_PEER", member)])
        }
    }

    /// The link of `session` stood for its member until now: its calls fail and the relays to the member end.
    private func retire(_ session: PeerSession) {
        session.failCalls()
        control.sessionEnded(session)
    }

    /// The incarnation this node presents: its registered one in etcd mode, the process's own otherwise.
    var liveIncarnation: String { etcd?.incarnation ?? configuration.incarnation }

    /// Why the node is degraded, nil when it is not (or in mesh mode).
    var degradedReason: String? { etcd?.degraded }

    /// Every member this node knows, itself included.
    var members: [Member] {
        state.memberList(own: Member(name: name, addresses: advertisedAddresses, incarnation: liveIncarnation))
    }

    /// The addresses of the members, by name.
    var memberAddresses: [String: [String]] { state.memberAddresses }

    /// The incarnation of the members, by name (once known).
    var memberIncarnations: [String: String] { state.memberIncarnations }

    // MARK: - Messages

    /// Hands a message to where `NodeState` routes it: served here, dropped, or decided by `NodeState`.
    func handle(_ message: WireMessage, from session: PeerSession) {
        let role: NodeState.Role = session.role == .console ? .console : .node
        let (route, directives) = state.take(message, session: session.id, role: role)
        switch route {
        case .serve: serve(message, from: session)
        case .drop(let reason): session.drop(message, because: reason)
        case .ignore: break
        case .decide: carryOut(directives)
        }
    }

    /// Sends an answer to `session`, unless the session is a console that leaves more unread than it
    /// may (`Admission.delivery`): its link is then closed instead. Returns whether it was sent.
    @discardableResult
    func send(_ message: WireMessage, to session: PeerSession) -> Bool {
        if case .close(let reason) = state.admission.delivery(to: session.id, backlog: session.link.backlog, event: false) {
            closeUnread(session, reason)
            return false
        }
        return session.send(message) == nil
    }

    /// Closes the link of a console that does not read, logging why (throttled: many such consoles
    /// cannot flood the log).
    func closeUnread(_ session: PeerSession, _ reason: String) {
        // Closed once: what is still owed to it (its other requests' answers, events) is dropped unlogged.
        guard !session.link.connection.isClosed else { return }
        throttle.log(.warn, kind: "consoleNotReading", "closing the link of \(session.identity.name): \(reason)",
                     fields: [("CORDIS_PEER", session.identity.name)])
        session.link.close(reason: reason)
    }
}
