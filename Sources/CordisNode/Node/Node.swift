import Cordis
import CordisWire
import Foundation

/// A cluster node: a plugin world and its Loader, listeners and links to the other members, and the
/// remote services it shares with them.
///
/// A local provider of a service in the `RemoteServiceCatalog` is announced to every peer; a peer's
/// announcement becomes a proxy fiber here that provides the service as a fallback, so consumers
/// inject it like a local one. A withdrawal is orderly (peers unload their consumers and acknowledge
/// before the provider's own teardown runs); a lost link withdraws at once.
/// All members are isolated to `CordisActor`; socket I/O runs on the node's `EventLoop`.
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
    let logger: Logger

    /// The node's name.
    public var name: String { configuration.name }

    var listeners: [Listener] = []
    var sessions: [String: PeerSession] = [:]
    var consoles: [Int: PeerSession] = [:]
    /// Addresses of members, by name (learned from handshakes and `members` messages).
    var memberAddresses: [String: [String]] = [:]
    var memberIncarnations: [String: String] = [:]
    /// The member reached at an address, once known.
    var addressOwner: [String: String] = [:]
    var dialling: Set<String> = []
    var exports: [Int: Export] = [:]
    var proxies: [ServiceProvider: ProxyState] = [:]
    /// Interface mismatches, by service name: why consumers stay pending.
    public internal(set) var mismatches: [String: String] = [:]
    var running = false
    var nextSessionID = 0
    var tasks: [Task<Void, Never>] = []
    private var statusListener: EffectHandle?
    /// The control API's state (relays, subscribers, forgotten members): `Control/`.
    let control = ControlState()

    /// A local provider announced to the peers.
    struct Export {
        var record: ProviderRecord
        var announcement: ServiceAnnouncement
        /// Peers that have not acknowledged a withdrawal in progress.
        var awaiting: Set<String> = []
        /// Peers that acknowledged it.
        var acknowledged: [String] = []
        /// Peers whose link was lost meanwhile (nothing to wait for).
        var lost: [String] = []
        var hold: WithdrawalHold?
    }

    /// A proxy for a provider on another node.
    struct ProxyState {
        var fiber: Fiber
        var session: Int
    }

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
        // Transport events (a stale socket file reclaimed, a peer refused by its credentials, a failed
        // accept) are logged; closed connections are already reported by the sessions.
        self.loop = try EventLoop(
            observer: { event in
                switch event.kind {
                case .connectionClosed: break
                case .staleSocketReclaimed: logger.info(event.message)
                default: logger.warn("\(event.kind): \(event.message)")
                }
            }, name: "cordis-\(configuration.name)")
        self.logger = logger
    }

    /// The real addresses of the listeners (with the port picked for port 0).
    public var listeningAddresses: [Address] { listeners.map(\.address) }

    /// The addresses this node advertises.
    public var advertisedAddresses: [String] {
        let chosen = configuration.advertise.isEmpty ? listeningAddresses : configuration.advertise
        return chosen.map(\.description)
    }

    /// The names of the members with a live link.
    public var connectedPeers: [String] { sessions.keys.sorted() }

    // MARK: - Lifecycle

    /// Listens (on `configuration.listen` plus `adopted` file descriptors), starts the Loader, then
    /// dials the seeds. Returns once the Loader has settled and the listeners are up.
    ///
    /// - Throws: `TransportError` (`addressInUse`…) from listening; the Loader's errors.
    public func start(adopting adopted: [Int32] = []) async throws {
        let options = ListenerOptions(
            limits: limits, policy: configuration.peerPolicy, socketGroup: configuration.socketGroup)
        for fd in adopted {
            listeners.append(try loop.adoptListener(fd: fd, options: options))
        }
        if adopted.isEmpty {
            for address in configuration.listen {
                listeners.append(try loop.listen(on: address, options: options))
            }
        }
        if configuration.secrets == nil, !configuration.allowsInsecureTCP,
           let open = listeners.first(where: { if case .tcp = $0.address { return true } else { return false } }) {
            for listener in listeners { listener.close() }
            listeners.removeAll()
            throw NodeStartError(
                "refusing to listen on \(open.address) without a secret (socket-activated or not); "
                    + "pass --secret-file, or --insecure to allow it")
        }
        running = true
        statusListener = try context.on(.status) { [weak self] change in
            self?.fiberChanged(change)
        }
        try startEventStream()
        try await loader.start()
        for listener in listeners {
            spawn { [weak self] in await self?.accept(from: listener) }
        }
        exportAvailableProviders()
        for peer in configuration.peers {
            dial(peer.description)
        }
    }

    /// Stops in order: every entry's fiber is disposed (remote consumers acknowledge withdrawals first),
    /// peers get `goodbye`, links and listeners close, the event loop stops.
    public func stop() async {
        guard running else { return }
        await loader.stop()
        running = false
        for listener in listeners { listener.close() }
        for session in Array(sessions.values) + Array(consoles.values) {
            session.link.close(reason: "node \(name) is stopping")
        }
        for task in tasks { task.cancel() }
        await loop.shutdown()
    }

    var limits: ConnectionLimits {
        var limits = ConnectionLimits()
        limits.maxFrameSize = configuration.maxFrameSize
        return limits
    }

    /// Starts long-lived work (a link's reader, a dialler), cancelled when the node stops.
    func spawn(_ body: @escaping @CordisActor () async -> Void) {
        tasks.removeAll { $0.isCancelled }
        tasks.append(Task { await body() })
    }

    /// Starts short work (one call, one withdrawal) that ends on its own; not kept.
    func detach(_ body: @escaping @CordisActor () async -> Void) {
        Task { await body() }
    }

    // MARK: - Handshake

    var identity: PeerIdentity {
        PeerIdentity(
            role: .node, name: name, incarnation: configuration.incarnation, addresses: advertisedAddresses,
            capabilities: ["remote-services"])
    }

    func handshakeConfiguration() -> HandshakeConfiguration {
        let live = sessions.mapValues(\.identity.incarnation)
        return HandshakeConfiguration(identity: identity, secrets: configuration.secrets) { peer in
            if peer.role == .node, let incarnation = live[peer.name], incarnation != peer.incarnation {
                return Rejection(
                    code: "duplicate-name",
                    reason: "a live member is named \(peer.name) (incarnation \(incarnation))")
            }
            return nil
        }
    }

    var linkOptions: LinkOptions {
        LinkOptions(maxFrameSize: configuration.maxFrameSize)
    }

    // MARK: - Accepting and dialling

    private func accept(from listener: Listener) async {
        for await connection in listener.connections {
            guard running else {
                connection.close()
                continue
            }
            let configuration = handshakeConfiguration()
            let options = linkOptions
            spawn { [weak self] in
                do {
                    let link = try await Link.establish(
                        connection, side: .responder, configuration: configuration, options: options)
                    self?.adopt(link)
                } catch {
                    self?.logger.info("handshake from \(connection.origin) failed: \(error)")
                }
            }
        }
    }

    /// Keeps a link to the member at `address`, re-dialling with backoff and jitter while the node runs.
    func dial(_ address: String) {
        guard running, !dialling.contains(address), !advertisedAddresses.contains(address), !isForgotten(address: address),
              let parsed = try? Address(parsing: address)
        else { return }
        dialling.insert(address)
        spawn { [weak self] in
            await self?.keepDialling(parsed)
            self?.dialling.remove(address)
        }
    }

    private func keepDialling(_ address: Address) async {
        var delay = configuration.reconnectBackoff.first
        while running, !Task.isCancelled, !isForgotten(address: address.description) {
            if let owner = addressOwner[address.description], let session = sessions[owner] {
                await session.ended()
                delay = configuration.reconnectBackoff.first
                continue
            }
            do {
                let link = try await Link.connect(
                    to: address, on: loop, configuration: handshakeConfiguration(), limits: limits, options: linkOptions)
                addressOwner[address.description] = link.peer.name
                if let session = adopt(link) {
                    await session.ended()
                }
                delay = configuration.reconnectBackoff.first
            } catch {
                logger.debug("dialling \(address) failed: \(error)")
                let jitter = Double.random(in: 0.5...1.0)
                try? await Task.sleep(for: delay * jitter)
                delay = min(delay * 2, configuration.reconnectBackoff.maximum)
            }
        }
    }

    // MARK: - Sessions

    /// Takes an established link into use; returns its session, or nil when the link was redundant.
    @discardableResult
    func adopt(_ link: Link) -> PeerSession? {
        let peer = link.peer
        nextSessionID += 1
        let session = PeerSession(id: nextSessionID, link: link, node: self)
        if peer.role == .console {
            consoles[session.id] = session
            logger.info("console \(peer.name) connected", fields: [("CORDIS_PEER", peer.name)])
            session.run()
            return session
        }
        if let existing = sessions[peer.name] {
            // One link per pair: keep the link dialled by the member whose name sorts first.
            let keepNew = existing.identity.incarnation != peer.incarnation
                || (link.side == .initiator) == (name < peer.name)
            if !keepNew {
                link.close(reason: "a link to \(peer.name) already exists")
                return nil
            }
            existing.link.close(reason: "replaced by a newer link to \(peer.name)")
            sessionEnded(existing)
        }
        if let previous = memberIncarnations[peer.name], previous != peer.incarnation {
            logger.info("\(peer.name) restarted (incarnation \(peer.incarnation))", fields: [("CORDIS_PEER", peer.name)])
        }
        memberIncarnations[peer.name] = peer.incarnation
        memberAddresses[peer.name] = peer.addresses
        for address in peer.addresses { addressOwner[address] = peer.name }
        sessions[peer.name] = session
        controlLinked(session)
        logger.info("linked to \(peer.name)", fields: [("CORDIS_PEER", peer.name)])
        session.run()
        session.send(.members(members))
        for export in exports.values where export.hold == nil {
            session.send(.announce(export.announcement))
        }
        return session
    }

    /// Every member this node knows, itself included.
    var members: [Member] {
        var list = [Member(name: name, addresses: advertisedAddresses, incarnation: configuration.incarnation)]
        for (member, addresses) in memberAddresses.sorted(by: { $0.key < $1.key }) {
            list.append(Member(name: member, addresses: addresses, incarnation: memberIncarnations[member] ?? ""))
        }
        return list
    }

    /// A session's link closed: its proxies go (consumers drop to `pending`), its calls fail, and
    /// withdrawals stop waiting for it.
    func sessionEnded(_ session: PeerSession) {
        controlSessionEnded(session)
        if session.identity.role == .console {
            consoles[session.id] = nil
            return
        }
        guard sessions[session.identity.name] === session else { return }
        sessions[session.identity.name] = nil
        logger.info("link to \(session.identity.name) lost", fields: [("CORDIS_PEER", session.identity.name)])
        session.failCalls()
        for (provider, proxy) in proxies where proxy.session == session.id {
            proxies[provider] = nil
            let fiber = proxy.fiber
            detach { try? await fiber.dispose() }
        }
        for id in Array(exports.keys) {
            acknowledge(exportID: id, from: session.identity.name, linkLost: true)
        }
    }

    /// Handles a message from a node or a console.
    func handle(_ message: WireMessage, from session: PeerSession) {
        switch message {
        case .members(let members):
            learn(members)
        case .announce(let announcement):
            addProxy(for: announcement, from: session)
        case .withdraw(let provider):
            removeProxy(provider, from: session)
        case .withdrawAck(let provider):
            if let id = exports.first(where: { $0.value.announcement.provider == provider })?.key {
                acknowledge(exportID: id, from: session.identity.name)
            }
        case .call(let call):
            serve(call, from: session)
        case .result, .error:
            session.complete(message)
        case .cancel:
            break
        case .request(let request):
            serve(request, from: session)
        case .response(let response):
            completeRelay(response, from: session)
        case .event(let event):
            forwardEvent(event, from: session)
        case .goodbye(let reason):
            logger.info("\(session.identity.name) said goodbye: \(reason ?? "")")
        default:
            break
        }
    }

    private func learn(_ members: [Member]) {
        for member in members where member.name != name && !isForgotten(member: member.name) {
            if memberAddresses[member.name] == nil || sessions[member.name] == nil {
                memberAddresses[member.name] = member.addresses
            }
            if sessions[member.name] == nil {
                for address in member.addresses { dial(address) }
            }
        }
    }
}
