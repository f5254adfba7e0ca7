import CordisDiscovery
import CordisJSON
import CordisWire

/// The cluster as etcd lists it, for a node in etcd mode: the members registered under their leases
/// and the services they export, and which of those this node offers as proxies now. One value that
/// takes what etcd and the node's links report (a listing, watched changes, a link to a member up or
/// lost) and answers with what the node must do; it owns no sockets and no clocks.
///
/// The rules, each in one place:
/// - **The listing is the truth, between links.** A provider listed under a member's lease is offered
///   (a proxy) while no link to that member says otherwise; its key deleted (a withdrawal, or the
///   lease expired) retracts it at once.
/// - **A link in use is authoritative for its member.** While linked, the member's own `withdraw`
///   messages (acknowledged) retract its providers, so a deleted key does not retract them twice.
/// - **A withdrawal over the link holds until etcd or the member says otherwise.** A provider the
///   member withdrew over its link stays retracted though etcd still lists it (the member may not have
///   reached etcd to delete its key: it lost its lease), until the member announces it again on a link,
///   the key is deleted, the key is put again (a newer revision: the member shares it again) or the
///   member's life ends. An idle close of the link does not end it: the listing may be stale.
/// - **A link that failed drops the life at once.** Its providers are retracted (consumers go to
///   `pending`, as in the mesh) and stay retracted until a link to the same life is up again; the node
///   re-dials it while it is listed. A member whose key is deleted (its lease expired) is gone.
/// - **A registration that ends is remembered.** A member whose key goes (its lease expired, or it
///   stopped) is kept in `ended`, with whether its last registration said it was stopping, until it
///   registers again or an operator forgets it: its health is `down` or `stopped`, never unlisted.
struct EtcdDirectory: Sendable {
    /// The key prefix of the members: `cordis/members/NAME`.
    static let membersPrefix = "cordis/members/"
    /// The key prefix of the services: `cordis/services/NODE/LIFE`.
    static let servicesPrefix = "cordis/services/"
    /// The most members and services kept (a directory is input: it must not make the node keep or
    /// dial without bound).
    static let maxMembers = 4096
    static let maxServices = 65_536

    /// A member as registered.
    struct Registration: Equatable, Sendable {
        var name: String
        var incarnation: String
        var addresses: [String]
        /// The member marked its registration as stopping (an orderly stop) before removing it.
        var stopping = false
    }

    /// A provider as registered.
    struct Listing: Equatable, Sendable {
        var announcement: ServiceAnnouncement
        var incarnation: String
    }

    /// What etcd and the links report.
    enum Event: Equatable, Sendable {
        /// The whole prefix was listed at `revision` (at start, and after a broken watch).
        case listed([EtcdKeyValue], revision: Int64)
        /// A watch reported changes.
        case changed([EtcdChange], revision: Int64)
        /// A link to a member life is up.
        case linkUp(member: String, incarnation: String)
        /// A link to a member life closed in order (idle, or the member said goodbye).
        case linkClosed(member: String)
        /// A link to a member life failed (reset, no heartbeat).
        case linkFailed(member: String, incarnation: String)
        /// The member withdrew a provider life over the link in use (the node removed its proxy).
        case withdrawnOverLink(member: String, life: Int)
        /// The member announced a provider life over the link in use (the node made its proxy).
        case announcedOverLink(member: String, life: Int)
        /// A re-dial of `member` reached none of its addresses; `random` (in 0...1) is the jitter of the
        /// next delay.
        case redialFailed(member: String, random: Double)
    }

    /// What the node must do.
    enum Directive: Equatable, Sendable {
        /// Offer a proxy of this provider (a no-op when one exists for its life).
        case offer(Listing)
        /// Retract the proxy of this provider (no acknowledgement is owed).
        case retract(Listing)
        /// The member life is over: close its links, fail its calls.
        case memberGone(name: String, incarnation: String)
        /// Dial this member once `after` has passed: its link failed while etcd still lists that life
        /// (at once), or the last re-dial failed (after a backoff from 50 ms to 2 s, jittered). Re-dials
        /// stop when a link to the member is up or etcd lists another life of it, or none.
        case redial(String, after: Duration)
        /// This node's own member key is gone from etcd (deleted by someone, or missing from a listing):
        /// put it back under the lease, if the name is still free.
        case restoreOwnKey
        /// A watched change touched a key under `cordis/` that no node uses (such as `example`): it is
        /// ignored; said once per directory.
        case ignoredUnknownKeys(example: String)
    }

    /// This node's name (its own keys are not offered).
    let name: String
    /// The members listed, by name.
    private(set) var members: [String: Registration] = [:]
    /// The members whose registration ended (their key deleted, or missing from a listing) while this
    /// node watched, by name, with their last registration: until they register again or are forgotten.
    private(set) var ended: [String: Registration] = [:]
    /// The providers listed, by key.
    private(set) var listings: [String: Listing] = [:]
    /// The keys of `listings` by the member that registered them, so a change to one member costs its
    /// own providers, not the whole directory (`listings` changes only with it: `list`, `unlist`).
    private var listingsOfMember: [String: Set<String>] = [:]
    /// The providers offered as proxies, by key.
    private(set) var offered: Set<String> = []
    /// The member lives with a link up.
    private(set) var linked: [String: String] = [:]
    /// Member lives whose link failed: not offered until linked again.
    private(set) var suspects: [String: String] = [:]
    /// The keys of providers withdrawn over a link, with the revision their key had then: not offered
    /// until the key is put again at a newer revision, deleted, or announced over a link.
    private(set) var withdrawnOnLink: [String: Int64] = [:]
    /// The revision at which each listed key was last put.
    private(set) var revisions: [String: Int64] = [:]
    /// The revision of the last listing or change applied.
    private(set) var revision: Int64 = 0
    /// Whether a change to a key no node uses was reported (it is, once).
    private(set) var reportedUnknownKeys = false
    /// The member lives being re-dialled, with the backoff of their next re-dial.
    private(set) var redials: [String: (incarnation: String, backoff: ReconnectBackoff)] = [:]
    /// The first and the largest delay between re-dials of a member.
    static let redialBackoff = (first: Duration.milliseconds(50), maximum: Duration.seconds(2))

    init(name: String) {
        self.name = name
    }

    /// Takes one event; returns the directives, in order.
    mutating func receive(_ event: Event) -> [Directive] {
        var directives: [Directive] = []
        switch event {
        case .listed(let kvs, let revision):
            self.revision = revision
            var freshMembers: [String: Registration] = [:]
            var freshListings: [String: Listing] = [:]
            var freshRevisions: [String: Int64] = [:]
            if !kvs.contains(where: { $0.key == Self.memberKey(name) }) { directives.append(.restoreOwnKey) }
            for kv in kvs {
                if let member = Self.member(kv), member.name != name, freshMembers.count < Self.maxMembers {
                    freshMembers[member.name] = member
                } else if let listing = Self.listing(kv), listing.announcement.node != name, freshListings.count < Self.maxServices {
                    freshListings[kv.key] = listing
                    freshRevisions[kv.key] = kv.modRevision
                }
            }
            for (memberName, old) in members where freshMembers[memberName]?.incarnation != old.incarnation {
                gone(memberName, old.incarnation, into: &directives)
                if freshMembers[memberName] == nil { end(old) }
            }
            for memberName in freshMembers.keys { ended[memberName] = nil }
            members = freshMembers
            withdrawnOnLink = withdrawnOnLink.filter { key, revision in
                freshListings[key] != nil && (freshRevisions[key] ?? 0) <= revision
            }
            for key in listings.keys.sorted() where freshListings[key] == nil {
                drop(key, into: &directives)
            }
            for (key, listing) in freshListings.sorted(by: { $0.key < $1.key }) {
                replaced(key, by: listing, into: &directives)
            }
            listings = [:]
            listingsOfMember = [:]
            for (key, listing) in freshListings { list(key, listing) }
            revisions = freshRevisions
            reconcile(listings.keys, into: &directives)
        case .changed(let changes, let revision):
            self.revision = max(self.revision, revision)
            // What the changes may have made offerable: the keys put, and every key of a member put.
            var touchedKeys: Set<String> = []
            var touchedMembers: Set<String> = []
            if !reportedUnknownKeys, let unknown = changes.first(where: { !Self.isDirectoryKey($0.key) }) {
                reportedUnknownKeys = true
                directives.append(.ignoredUnknownKeys(example: unknown.key))
            }
            for change in changes {
                switch change {
                case .put(let kv):
                    if let member = Self.member(kv) {
                        guard member.name != name, members[member.name] != nil || members.count < Self.maxMembers else { continue }
                        if let old = members[member.name], old.incarnation != member.incarnation {
                            gone(member.name, old.incarnation, into: &directives)
                        }
                        members[member.name] = member
                        ended[member.name] = nil
                        touchedMembers.insert(member.name)
                    } else if let listing = Self.listing(kv) {
                        guard listing.announcement.node != name, listings[kv.key] != nil || listings.count < Self.maxServices
                        else { continue }
                        replaced(kv.key, by: listing, into: &directives)
                        list(kv.key, listing)
                        revisions[kv.key] = kv.modRevision
                        touchedKeys.insert(kv.key)
                        if let withdrawn = withdrawnOnLink[kv.key], kv.modRevision > withdrawn {
                            withdrawnOnLink[kv.key] = nil
                        }
                    }
                case .delete(let key, _):
                    if key == Self.memberKey(name) {
                        directives.append(.restoreOwnKey)
                    } else if key.hasPrefix(Self.membersPrefix) {
                        let memberName = String(key.dropFirst(Self.membersPrefix.count))
                        if let old = members.removeValue(forKey: memberName) {
                            gone(memberName, old.incarnation, into: &directives)
                            end(old)
                        }
                    } else if listings[key] != nil {
                        withdrawnOnLink[key] = nil
                        drop(key, into: &directives)
                        unlist(key)
                        revisions[key] = nil
                    }
                }
            }
            for member in touchedMembers { touchedKeys.formUnion(keys(of: member)) }
            reconcile(touchedKeys, into: &directives)
        case .linkUp(let member, let incarnation):
            linked[member] = incarnation
            redials[member] = nil
            if suspects[member] == incarnation { suspects[member] = nil }
            reconcile(keys(of: member), into: &directives)
        case .linkClosed(let member):
            linked[member] = nil
            reconcile(keys(of: member), into: &directives)
        case .linkFailed(let member, let incarnation):
            if linked[member] == incarnation { linked[member] = nil }
            // A link to an earlier life failing says nothing of the life listed now (which may be
            // suspected itself: it stays so).
            if members[member] == nil || members[member]?.incarnation == incarnation { suspects[member] = incarnation }
            retractOffers(of: member, incarnation, into: &directives)
            if members[member]?.incarnation == incarnation {
                redials[member] = (incarnation, ReconnectBackoff(first: Self.redialBackoff.first, maximum: Self.redialBackoff.maximum))
                directives.append(.redial(member, after: .zero))
            }
        case .redialFailed(let member, let random):
            // Linked again, or that life left etcd: `linkUp` and `gone` ended its re-dials.
            guard var redial = redials[member] else { break }
            let delay = redial.backoff.next(random: random)
            redials[member] = redial
            directives.append(.redial(member, after: delay))
        case .withdrawnOverLink(let member, let life):
            let key = Self.serviceKey(node: member, life: life)
            withdrawnOnLink[key] = revisions[key] ?? 0
            offered.remove(key)
        case .announcedOverLink(let member, let life):
            let key = Self.serviceKey(node: member, life: life)
            withdrawnOnLink[key] = nil
            reconcile([key], into: &directives)
        }
        return directives
    }

    // MARK: - Rules

    /// Offers every listed provider of a listed, unsuspected member life not offered yet.
    private mutating func reconcile(_ keys: some Collection<String>, into directives: inout [Directive]) {
        // Only the candidates not offered yet are sorted (for a stable order of directives): a change
        // costs the keys it touched, not the whole directory.
        for key in keys.filter({ !offered.contains($0) && withdrawnOnLink[$0] == nil }).sorted() {
            guard let listing = listings[key], let member = members[listing.announcement.node],
                  member.incarnation == listing.incarnation, suspects[member.name] != listing.incarnation
            else { continue }
            offered.insert(key)
            directives.append(.offer(listing))
        }
    }

    /// A listing went: retracted unless its member's link is up (the link's `withdraw` does it then).
    private mutating func drop(_ key: String, into directives: inout [Directive]) {
        guard offered.contains(key), let listing = listings[key] else { return }
        offered.remove(key)
        if linked[listing.announcement.node] == listing.incarnation { return }
        directives.append(.retract(listing))
    }

    /// A key now lists another provider (another life or incarnation under the same key): the proxy of
    /// the one offered before is retracted, so the node never holds a proxy the directory forgot.
    private mutating func replaced(_ key: String, by listing: Listing, into directives: inout [Directive]) {
        guard offered.contains(key), let old = listings[key], old != listing else { return }
        offered.remove(key)
        directives.append(.retract(old))
    }

    /// A member's registration ended: remembered (within `maxMembers`) until it registers again or is
    /// forgotten.
    private mutating func end(_ registration: Registration) {
        guard ended[registration.name] != nil || ended.count < Self.maxMembers else { return }
        ended[registration.name] = registration
    }

    /// An operator forgot `member`: its ended registration is no longer remembered.
    mutating func forget(_ member: String) {
        ended[member] = nil
    }

    /// A member life is over: its offers are retracted and the node told.
    private mutating func gone(_ member: String, _ incarnation: String, into directives: inout [Directive]) {
        retractOffers(of: member, incarnation, into: &directives)
        if suspects[member] == incarnation { suspects[member] = nil }
        if redials[member]?.incarnation == incarnation { redials[member] = nil }
        forgetLinkWithdrawals(of: member)
        directives.append(.memberGone(name: member, incarnation: incarnation))
    }

    /// Retracts every offered provider of the life `incarnation` of `member` (only its own keys are
    /// looked at in order: a member's departure costs its providers, not the whole directory).
    private mutating func retractOffers(of member: String, _ incarnation: String, into directives: inout [Directive]) {
        for key in keys(of: member).filter({ offered.contains($0) }).sorted() {
            guard let listing = listings[key], listing.announcement.node == member, listing.incarnation == incarnation
            else { continue }
            offered.remove(key)
            directives.append(.retract(listing))
        }
    }

    /// The life of `member` ended: its withdrawals over a link no longer hold.
    private mutating func forgetLinkWithdrawals(of member: String) {
        let prefix = "\(Self.servicesPrefix)\(member)/"
        withdrawnOnLink = withdrawnOnLink.filter { !$0.key.hasPrefix(prefix) }
    }

    /// The keys `member` lists providers under.
    private func keys(of member: String) -> Set<String> {
        listingsOfMember[member] ?? []
    }

    /// Lists a provider under `key` (the key names its member: see `listing(_:)`).
    private mutating func list(_ key: String, _ listing: Listing) {
        listings[key] = listing
        listingsOfMember[listing.announcement.node, default: []].insert(key)
    }

    /// Forgets the provider listed under `key`.
    private mutating func unlist(_ key: String) {
        guard let old = listings.removeValue(forKey: key) else { return }
        let member = old.announcement.node
        listingsOfMember[member]?.remove(key)
        if listingsOfMember[member]?.isEmpty == true { listingsOfMember[member] = nil }
    }

    // MARK: - Keys

    /// Whether `key` is one the directory reads: a member's or a service's.
    static func isDirectoryKey(_ key: String) -> Bool {
        key.hasPrefix(membersPrefix) || key.hasPrefix(servicesPrefix)
    }

    /// The key of a member.
    static func memberKey(_ name: String) -> String { membersPrefix + name }

    /// The key of a provider life.
    static func serviceKey(node: String, life: Int) -> String { "\(servicesPrefix)\(node)/\(life)" }

    /// The value of a member key.
    static func memberValue(_ registration: Registration, version: String) -> [UInt8] {
        var value: JSONObject = [
            "name": .string(registration.name), "incarnation": .string(registration.incarnation),
            "addresses": .array(registration.addresses.map { .string($0) }), "version": .string(version),
        ]
        if registration.stopping { value["stopping"] = true }
        return JSONValue.object(value).serialized()
    }

    /// The value of a service key.
    static func serviceValue(_ announcement: ServiceAnnouncement, incarnation: String) -> [UInt8] {
        let value: JSONValue = [
            "service": .string(announcement.service), "realm": announcement.realm.map { .string($0) } ?? .null,
            "interface": .string(announcement.interface), "interfaceVersion": .string(announcement.interfaceVersion),
            "node": .string(announcement.node), "fiber": .integer(announcement.fiber),
            "life": .integer(announcement.life), "incarnation": .string(incarnation),
        ]
        return value.serialized()
    }

    /// What creating this node's member key found, and what follows.
    enum Claim: Equatable, Sendable {
        /// The name was free: the key was created under the new lease.
        case created
        /// This very life's key, under an older lease (a lease lost, an attempt that timed out): take it
        /// over, replacing it only if it has not changed since `ifModifiedAt`.
        case takeOver(ifModifiedAt: Int64)
        /// Another life holds the name: its incarnation, or nil when the key does not read as a member key.
        case taken(by: String?)
    }

    /// The rule that keeps a name to one life: creating the member key found `holder` (nil: the key was
    /// free and is now created); `incarnation` is this node's life.
    static func claim(found holder: EtcdKeyValue?, by incarnation: String) -> Claim {
        guard let holder else { return .created }
        let holding = member(holder)?.incarnation
        return holding == incarnation ? .takeOver(ifModifiedAt: holder.modRevision) : .taken(by: holding)
    }

    /// A member key read back; nil for anything else or anything malformed (ignored, never trusted).
    static func member(_ kv: EtcdKeyValue) -> Registration? {
        guard kv.key.hasPrefix(membersPrefix), let object = try? JSONParser().parse(kv.value),
              let name = object["name"]?.stringValue, PeerName.isValid(name), kv.key == memberKey(name),
              let incarnation = object["incarnation"]?.stringValue, !incarnation.isEmpty, incarnation.count <= 128
        else { return nil }
        let addresses = (object["addresses"]?.arrayValue ?? []).compactMap(\.stringValue)
            .filter { $0.utf8.count <= 1024 }.prefix(Membership.maxAddresses)
        return Registration(
            name: name, incarnation: incarnation, addresses: Array(addresses), stopping: object["stopping"]?.boolValue == true)
    }

    /// A service key read back; nil for anything else or anything malformed.
    static func listing(_ kv: EtcdKeyValue) -> Listing? {
        guard kv.key.hasPrefix(servicesPrefix), let object = try? JSONParser().parse(kv.value),
              let service = object["service"]?.stringValue, let interface = object["interface"]?.stringValue,
              let version = object["interfaceVersion"]?.stringValue, let node = object["node"]?.stringValue,
              PeerName.isValid(node), let fiber = object["fiber"]?.intValue, let life = object["life"]?.intValue,
              let incarnation = object["incarnation"]?.stringValue, kv.key == serviceKey(node: node, life: life)
        else { return nil }
        let realm = object["realm"]?.stringValue
        return Listing(
            announcement: ServiceAnnouncement(
                service: service, realm: realm, interface: interface, interfaceVersion: version, node: node,
                fiber: fiber, life: life),
            incarnation: incarnation)
    }
}
