import CordisWire

/// The proxies of providers on other members: one value that takes what members announce, withdraw or
/// lose (and, in etcd mode, what etcd offers and retracts) and answers with the proxies to create and
/// dispose and the acknowledgements owed.
///
/// Its rules, each in one place:
/// - **One proxy per member life and provider life** (`Key`): the same announcement again (on a second
///   link of that life, or offered by etcd after it came over the link) changes nothing.
/// - **Interfaces must match**: an announcement whose interface name or version differs from this node's
///   own for the service makes no proxy; the mismatch is kept (consumers stay `pending` with its reason)
///   until the provider life ends.
/// - **Consumers unload, then the withdrawal is acknowledged**: a withdrawal over a link disposes the
///   proxy, and its acknowledgement goes once the node reports that disposal finished (`disposed`); a
///   withdrawal repeated meanwhile is acknowledged then too; a withdrawal of a life with no proxy here,
///   and none being disposed, is acknowledged at once. A proxy made again (announced again) while an
///   earlier proxy of the same provider life unloads is disposed on its own, but nothing owed for that
///   provider life is acknowledged while either still unloads.
/// - **A member life's end drops its proxies** with no acknowledgement (no one waits for it), and so does
///   a provider etcd no longer lists.
/// - **A proxy provides its service as a fallback ranked by its member's name**, so every node that sees
///   the same members resolves a service to the same member, and a local provider always wins.
/// - **A proxy the node could not create does not exist**: withdrawing it later is acknowledged at once.
///
/// It owns no fibers, sockets or clocks: the node keeps the proxy fiber of each key, carries out the
/// directives and reports each disposal's end.
struct Proxies {
    /// A proxy of one provider life on one member life.
    struct Key: Hashable, Sendable, CustomStringConvertible {
        /// The member's name.
        var node: String
        /// The member's life.
        var incarnation: String
        /// The service.
        var service: String
        /// The shared realm's label, nil for the root realm.
        var realm: String?
        /// The provider's fiber on the member.
        var fiber: Int
        /// The provider life on the member.
        var life: Int

        /// The key of `announcement`'s provider life on the member life `incarnation`.
        init(_ announcement: ServiceAnnouncement, incarnation: String) {
            self.init(
                node: announcement.node, incarnation: incarnation, service: announcement.service,
                realm: announcement.realm, fiber: announcement.fiber, life: announcement.life)
        }

        /// The key of the withdrawn `provider` on the member life `incarnation`.
        init(_ provider: ServiceProvider, incarnation: String) {
            self.init(
                node: provider.node, incarnation: incarnation, service: provider.service, realm: provider.realm,
                fiber: provider.fiber, life: provider.life)
        }

        init(node: String, incarnation: String, service: String, realm: String?, fiber: Int, life: Int) {
            self.node = node
            self.incarnation = incarnation
            self.service = service
            self.realm = realm
            self.fiber = fiber
            self.life = life
        }

        var description: String { "\(service) on \(node) (life \(life))" }
    }

    /// A remote-capable service's interface as this node knows it.
    struct Interface: Equatable, Sendable {
        /// The interface's name.
        var name: String
        /// Its version.
        var version: String
    }

    /// What happens to remote providers.
    enum Event: Equatable, Sendable {
        /// A member life announced a provider (over a link, or offered from etcd's listing).
        case announced(ServiceAnnouncement, incarnation: String)
        /// A member life withdrew a provider over the link of `session`: an acknowledgement is owed, after
        /// the consumers here unloaded.
        case withdrawn(ServiceProvider, incarnation: String, session: Int)
        /// etcd no longer lists a provider: its proxy goes; no one waits for an acknowledgement.
        case retracted(ServiceAnnouncement, incarnation: String)
        /// A member life is over here: all its proxies go.
        case lifeEnded(member: String, incarnation: String)
        /// The disposal `id` (of a `dispose` directive) finished: the proxy's consumers unloaded.
        case disposed(Int)
        /// The node could not create the proxy of `key` (a `create` directive).
        case notCreated(Key)
    }

    /// What the node must do.
    enum Directive: Equatable, Sendable {
        /// Create the proxy fiber of `key`, providing `announcement`'s service as a fallback of `rank`
        /// (the member's name); report `notCreated` if it cannot be.
        case create(Key, ServiceAnnouncement, rank: String)
        /// The announcement speaks another interface: no proxy; log the reason.
        case mismatch(Key, reason: String)
        /// Dispose the proxy fiber of `key` (its consumers unload to `pending`), then report
        /// `disposed(id)`. `why` says what ended it.
        case dispose(Key, id: Int, why: Ending)
        /// Send a `withdrawAck` owed: the proxy's consumers unloaded, or there was no proxy.
        case acknowledge(Acknowledgement)
    }

    /// A `withdrawAck` owed: for `provider`, on the link the withdrawal came by (`session`), or the
    /// member's link in use if that one went meanwhile.
    struct Acknowledgement: Equatable, Sendable {
        /// The provider withdrawn.
        var provider: ServiceProvider
        /// The session the withdrawal came by.
        var session: Int
    }

    /// A proxy being disposed, and the acknowledgements owed once its consumers unloaded.
    struct Disposal: Equatable, Sendable {
        /// The proxy's key.
        var key: Key
        /// The `withdrawAck`s to send once the disposal finished.
        var owed: [Acknowledgement]
    }

    /// Why a proxy goes.
    enum Ending: Equatable, Sendable {
        /// Its provider was withdrawn over the link.
        case withdrawn
        /// etcd no longer lists its provider.
        case retracted
        /// Its member's life is over here.
        case lifeEnded
    }

    /// The interfaces of the services this node can proxy, by service name.
    let interfaces: [String: Interface]
    /// The proxies that exist.
    private(set) var live: Set<Key> = []
    /// Announcements refused for another interface, with the reason.
    private(set) var mismatched: [Key: String] = [:]
    /// The disposals under way, by id.
    private(set) var disposals: [Int: Disposal] = [:]
    /// The disposals under way of each key, oldest first: acknowledgements owed for the key wait for the
    /// latest. Changed only with `disposals`.
    private var disposalsOf: [Key: [Int]] = [:]
    /// How many disposals began (the latest one's id): unchanged while no proxy goes.
    private(set) var disposalsBegun = 0

    /// No proxies yet; `interfaces` are the node's own remote services.
    init(interfaces: [String: Interface]) {
        self.interfaces = interfaces
    }

    /// Whether the disposals by key are exactly `disposals` (checked by the seeded sequence tests).
    var disposalsMatchKeys: Bool {
        disposalsOf.values.allSatisfy { !$0.isEmpty }
            && Set(disposalsOf.values.joined()) == Set(disposals.keys)
            && disposalsOf.allSatisfy { key, ids in ids.allSatisfy { disposals[$0]?.key == key } && ids == ids.sorted() }
    }

    /// Interface mismatches, by service name (the first member by name when several differ).
    var mismatchReasons: [String: String] {
        var reasons: [String: String] = [:]
        for (key, reason) in mismatched.sorted(by: { $0.key.node < $1.key.node }) where reasons[key.service] == nil {
            reasons[key.service] = reason
        }
        return reasons
    }

    /// Takes one event; returns the directives, in the order to carry them out.
    mutating func receive(_ event: Event) -> [Directive] {
        switch event {
        case .announced(let announcement, let incarnation):
            let key = Key(announcement, incarnation: incarnation)
            guard !live.contains(key), mismatched[key] == nil, let own = interfaces[announcement.service] else { return [] }
            guard own.name == announcement.interface, own.version == announcement.interfaceVersion else {
                let reason = "\(announcement.service) on \(announcement.node) speaks \(announcement.interface) "
                    + "version \(announcement.interfaceVersion); this node knows \(own.name) version \(own.version)"
                mismatched[key] = reason
                return [.mismatch(key, reason: reason)]
            }
            live.insert(key)
            return [.create(key, announcement, rank: announcement.node)]
        case .withdrawn(let provider, let incarnation, let session):
            let key = Key(provider, incarnation: incarnation)
            let owed = Acknowledgement(provider: provider, session: session)
            mismatched[key] = nil
            if live.remove(key) != nil { return [dispose(key, why: .withdrawn, owing: [owed])] }
            // Its consumers are still unloading: acknowledged when they have.
            if let id = disposalsOf[key]?.last {
                disposals[id]?.owed.append(owed)
                return []
            }
            return [.acknowledge(owed)]
        case .retracted(let announcement, let incarnation):
            let key = Key(announcement, incarnation: incarnation)
            mismatched[key] = nil
            guard live.remove(key) != nil else { return [] }
            return [dispose(key, why: .retracted)]
        case .lifeEnded(let member, let incarnation):
            mismatched = mismatched.filter { $0.key.node != member || $0.key.incarnation != incarnation }
            let ended = live.filter { $0.node == member && $0.incarnation == incarnation }
            live.subtract(ended)
            return ended.sorted { $0.life < $1.life }.map { dispose($0, why: .lifeEnded) }
        case .disposed(let id):
            guard let disposal = disposals.removeValue(forKey: id) else { return [] }
            // A proxy of the same provider life made again while this one unloaded is unloading too: what
            // this disposal owed waits for the latest such (the provider goes only once no consumer here
            // holds it).
            disposalsOf[disposal.key]?.removeAll { $0 == id }
            if let other = disposalsOf[disposal.key]?.last {
                disposals[other]?.owed += disposal.owed
                return []
            }
            disposalsOf[disposal.key] = nil
            return disposal.owed.map(Directive.acknowledge)
        case .notCreated(let key):
            live.remove(key)
            return []
        }
    }

    private mutating func dispose(_ key: Key, why: Ending, owing owed: [Acknowledgement] = []) -> Directive {
        disposalsBegun += 1
        disposals[disposalsBegun] = Disposal(key: key, owed: owed)
        disposalsOf[key, default: []].append(disposalsBegun)
        return .dispose(key, id: disposalsBegun, why: why)
    }
}
