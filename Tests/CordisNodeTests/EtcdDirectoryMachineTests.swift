import CordisDiscovery
import CordisProcessTesting
@testable import CordisNode
import CordisWire
import Testing

/// `EtcdDirectory`, driven with scripted etcd listings, watch changes and link events.
@Suite("etcd directory machine")
struct EtcdDirectoryMachineTests {
    static func member(_ name: String, _ incarnation: String) -> EtcdKeyValue {
        EtcdKeyValue(
            key: EtcdDirectory.memberKey(name),
            value: EtcdDirectory.memberValue(
                .init(name: name, incarnation: incarnation, addresses: ["unix:/tmp/\(name).sock"]), version: "test"))
    }

    static func clock(on node: String, _ incarnation: String, life: Int = 7, modRevision: Int64 = 0) -> EtcdKeyValue {
        EtcdKeyValue(
            key: EtcdDirectory.serviceKey(node: node, life: life),
            value: EtcdDirectory.serviceValue(
                ServiceAnnouncement(
                    service: "clock", realm: nil, interface: "ClockAPI", interfaceVersion: "v", node: node, fiber: 3,
                    life: life),
                incarnation: incarnation),
            modRevision: modRevision)
    }

    static func offers(_ directives: [EtcdDirectory.Directive]) -> [String] {
        directives.compactMap { if case .offer(let listing) = $0 { listing.announcement.node } else { nil } }
    }

    static func retracts(_ directives: [EtcdDirectory.Directive]) -> [String] {
        directives.compactMap { if case .retract(let listing) = $0 { listing.announcement.node } else { nil } }
    }

    @Test("a name is claimed by one life: a free key is created, this life's own key is taken over if unchanged, any other holder (or a key that is no member key) keeps it")
    func claim() {
        let own = EtcdKeyValue(
            key: EtcdDirectory.memberKey("a"),
            value: EtcdDirectory.memberValue(.init(name: "a", incarnation: "a1", addresses: []), version: "test"),
            modRevision: 7)
        #expect(EtcdDirectory.claim(found: nil, by: "a1") == .created)
        #expect(EtcdDirectory.claim(found: own, by: "a1") == .takeOver(ifModifiedAt: 7))
        #expect(EtcdDirectory.claim(found: own, by: "a2") == .taken(by: "a1"))
        let garbled = EtcdKeyValue(key: EtcdDirectory.memberKey("a"), value: Array("{".utf8), modRevision: 8)
        #expect(EtcdDirectory.claim(found: garbled, by: "a1") == .taken(by: nil))
    }

    @Test("a listing offers every listed provider of a listed member, never this node's own")
    func listingOffers() {
        var directory = EtcdDirectory(name: "a")
        let directives = directory.receive(.listed(
            [Self.member("a", "ia"), Self.member("b", "ib"), Self.clock(on: "a", "ia"), Self.clock(on: "b", "ib")],
            revision: 9))
        #expect(Self.offers(directives) == ["b"])
        #expect(directory.revision == 9)
        #expect(directory.members.keys.sorted() == ["b"])
    }

    @Test("a provider of an unlisted member or of another incarnation is not offered")
    func staleProvidersAreNotOffered() {
        var directory = EtcdDirectory(name: "a")
        #expect(Self.offers(directory.receive(.listed([Self.clock(on: "b", "ib")], revision: 2))).isEmpty)
        #expect(Self.offers(directory.receive(.changed([.put(Self.member("b", "other"))], revision: 3))).isEmpty)
        #expect(Self.offers(directory.receive(.changed([.put(Self.clock(on: "b", "other", life: 8))], revision: 4))) == ["b"])
    }

    @Test("a deleted service key retracts its proxy while no link is up, and waits for the link's withdraw while one is")
    func deletedKeys() {
        var directory = EtcdDirectory(name: "a")
        _ = directory.receive(.listed([Self.member("b", "ib"), Self.clock(on: "b", "ib")], revision: 2))
        let key = EtcdDirectory.serviceKey(node: "b", life: 7)
        #expect(Self.retracts(directory.receive(.changed([.delete(key: key, revision: 3)], revision: 3))) == ["b"])

        _ = directory.receive(.changed([.put(Self.clock(on: "b", "ib"))], revision: 4))
        _ = directory.receive(.linkUp(member: "b", incarnation: "ib"))
        #expect(Self.retracts(directory.receive(.changed([.delete(key: key, revision: 5)], revision: 5))).isEmpty)
    }

    @Test("a failed link retracts the life's providers at once and re-dials; the same life linked again is offered again")
    func failedLink() {
        var directory = EtcdDirectory(name: "a")
        _ = directory.receive(.listed([Self.member("b", "ib"), Self.clock(on: "b", "ib")], revision: 2))
        _ = directory.receive(.linkUp(member: "b", incarnation: "ib"))
        let failed = directory.receive(.linkFailed(member: "b", incarnation: "ib"))
        #expect(Self.retracts(failed) == ["b"])
        #expect(failed.contains(.redial("b", after: .zero)))
        // A relisting does not bring the suspect back ...
        #expect(Self.offers(directory.receive(.listed(
            [Self.member("b", "ib"), Self.clock(on: "b", "ib")], revision: 3))).isEmpty)
        // ... a link to the same life does.
        #expect(Self.offers(directory.receive(.linkUp(member: "b", incarnation: "ib"))) == ["b"])
    }

    static func redials(_ directives: [EtcdDirectory.Directive]) -> [Duration] {
        directives.compactMap { if case .redial(_, let delay) = $0 { delay } else { nil } }
    }

    @Test("re-dials of a failed life back off from 50 ms to 2 s with jitter, and stop once it is linked, gone or replaced")
    func redialBackoff() {
        var directory = EtcdDirectory(name: "a")
        _ = directory.receive(.listed([Self.member("b", "ib")], revision: 2))
        _ = directory.receive(.linkUp(member: "b", incarnation: "ib"))
        #expect(Self.redials(directory.receive(.linkFailed(member: "b", incarnation: "ib"))) == [.zero])
        // Each failure doubles the step (jitter 1: the whole step; 0: half of it), up to 2 s.
        var delays: [Duration] = []
        for _ in 0 ..< 8 { delays += Self.redials(directory.receive(EtcdDirectory.Event.redialFailed(member: "b", random: 1))) }
        #expect(delays == [50, 100, 200, 400, 800, 1600, 2000, 2000].map { Duration.milliseconds($0) })
        #expect(Self.redials(directory.receive(EtcdDirectory.Event.redialFailed(member: "b", random: 0))) == [.seconds(1)])
        // Linked: a late failure report asks for nothing more; a new failure starts from the first step.
        _ = directory.receive(.linkUp(member: "b", incarnation: "ib"))
        #expect(directory.receive(EtcdDirectory.Event.redialFailed(member: "b", random: 1)).isEmpty)
        _ = directory.receive(.linkFailed(member: "b", incarnation: "ib"))
        #expect(Self.redials(directory.receive(EtcdDirectory.Event.redialFailed(member: "b", random: 1))) == [.milliseconds(50)])
        // Another life listed: the old one is not re-dialled.
        _ = directory.receive(.changed([.put(Self.member("b", "ib2"))], revision: 3))
        #expect(directory.receive(EtcdDirectory.Event.redialFailed(member: "b", random: 1)).isEmpty)
        // Gone from etcd while re-dialled: nothing more either.
        _ = directory.receive(.linkUp(member: "b", incarnation: "ib2"))
        _ = directory.receive(.linkFailed(member: "b", incarnation: "ib2"))
        _ = directory.receive(.changed([.delete(key: EtcdDirectory.memberKey("b"), revision: 4)], revision: 4))
        #expect(directory.receive(EtcdDirectory.Event.redialFailed(member: "b", random: 1)).isEmpty)
        #expect(directory.redials.isEmpty)
        // A failed link of a life etcd no longer lists is not re-dialled at all.
        #expect(Self.redials(directory.receive(.linkFailed(member: "b", incarnation: "ib2"))).isEmpty)
    }

    @Test("changes to keys under cordis/ that no node uses are ignored, and reported once")
    func unknownKeys() {
        var directory = EtcdDirectory(name: "a")
        _ = directory.receive(.listed([Self.member("b", "ib")], revision: 2))
        let other = EtcdKeyValue(key: "cordis/elsewhere/x", value: Array("{}".utf8), modRevision: 3)
        let first = directory.receive(.changed([.put(other), .put(Self.clock(on: "b", "ib"))], revision: 3))
        #expect(first.first == .ignoredUnknownKeys(example: "cordis/elsewhere/x"))
        #expect(Self.offers(first) == ["b"])
        let again = directory.receive(.changed([.delete(key: "cordis/elsewhere/x", revision: 4), .put(other)], revision: 5))
        #expect(again.isEmpty)
    }

    @Test("a link to an earlier life failing keeps the life listed now suspected, and offers nothing")
    func staleLinkFailure() {
        var directory = EtcdDirectory(name: "a")
        _ = directory.receive(.listed([Self.member("b", "i2"), Self.clock(on: "b", "i2")], revision: 2))
        _ = directory.receive(.linkFailed(member: "b", incarnation: "i2"))
        #expect(directory.offered.isEmpty)
        // A link still held to b's earlier life fails: i2 stays suspected, so a new key of it waits for a link.
        #expect(Self.offers(directory.receive(.linkFailed(member: "b", incarnation: "i1"))).isEmpty)
        #expect(directory.suspects["b"] == "i2")
        #expect(Self.offers(directory.receive(.changed([.put(Self.clock(on: "b", "i2", life: 8))], revision: 3))).isEmpty)
        #expect(Self.offers(directory.receive(.linkUp(member: "b", incarnation: "i2"))) == ["b", "b"])
    }

    @Test("a provider withdrawn over the link stays retracted though etcd still lists it, until it is announced again or its key deleted")
    func withdrawnOverTheLink() {
        var directory = EtcdDirectory(name: "a")
        _ = directory.receive(.listed([Self.member("b", "ib"), Self.clock(on: "b", "ib")], revision: 2))
        _ = directory.receive(.linkUp(member: "b", incarnation: "ib"))
        // b withdrew its clock over the link (etcd did not answer b, so its key is still listed).
        _ = directory.receive(.withdrawnOverLink(member: "b", life: 7))
        #expect(directory.offered.isEmpty)
        #expect(Self.offers(directory.receive(.listed([Self.member("b", "ib"), Self.clock(on: "b", "ib")], revision: 3))).isEmpty)
        #expect(Self.offers(directory.receive(.changed([.put(Self.clock(on: "b", "ib"))], revision: 4))).isEmpty)
        // Announced again on the link: it counts as offered again (the node already made the proxy).
        #expect(Self.offers(directory.receive(.announcedOverLink(member: "b", life: 7))) == ["b"])
        #expect(directory.offered.count == 1)
        // A deleted key forgets the withdrawal: put again while linked, it is offered.
        _ = directory.receive(.withdrawnOverLink(member: "b", life: 7))
        let key = EtcdDirectory.serviceKey(node: "b", life: 7)
        #expect(Self.retracts(directory.receive(.changed([.delete(key: key, revision: 5)], revision: 5))).isEmpty)
        #expect(Self.offers(directory.receive(.changed([.put(Self.clock(on: "b", "ib"))], revision: 6))) == ["b"])
    }

    @Test("a provider withdrawn over a link that then closed as idle is not offered again from the stale listing; put again by its node, it is")
    func withdrawalOutlivesAnIdleClose() {
        var directory = EtcdDirectory(name: "a")
        let listed = Self.clock(on: "b", "ib", modRevision: 3)
        _ = directory.receive(.listed([Self.member("b", "ib"), listed], revision: 3))
        _ = directory.receive(.linkUp(member: "b", incarnation: "ib"))
        // b lost its lease: it withdrew its clock over the link, etcd not answering it (its key stays).
        _ = directory.receive(.withdrawnOverLink(member: "b", life: 7))
        // The link closes as idle before etcd deletes b's keys: the old listing does not bring it back.
        #expect(Self.offers(directory.receive(.linkClosed(member: "b"))).isEmpty)
        // Nor does a re-listing that still holds the very same key (same revision), nor a link up again.
        #expect(Self.offers(directory.receive(.listed([Self.member("b", "ib"), listed], revision: 8))).isEmpty)
        #expect(Self.offers(directory.receive(.linkUp(member: "b", incarnation: "ib"))).isEmpty)
        _ = directory.receive(.linkClosed(member: "b"))
        // b shares it again: its key is put anew, and it is offered.
        #expect(Self.offers(directory.receive(.changed([.put(Self.clock(on: "b", "ib", modRevision: 9))], revision: 9))) == ["b"])
    }

    @Test("an idle link closed in order changes nothing that is offered")
    func idleClose() {
        var directory = EtcdDirectory(name: "a")
        _ = directory.receive(.listed([Self.member("b", "ib"), Self.clock(on: "b", "ib")], revision: 2))
        _ = directory.receive(.linkUp(member: "b", incarnation: "ib"))
        #expect(directory.receive(.linkClosed(member: "b")).isEmpty)
        #expect(directory.offered.count == 1)
    }

    @Test("a member key deleted (its lease expired) retracts its providers, even while linked, and ends its life")
    func leaseExpiry() {
        var directory = EtcdDirectory(name: "a")
        _ = directory.receive(.listed([Self.member("b", "ib"), Self.clock(on: "b", "ib")], revision: 2))
        _ = directory.receive(.linkUp(member: "b", incarnation: "ib"))
        let directives = directory.receive(.changed([.delete(key: EtcdDirectory.memberKey("b"), revision: 3)], revision: 3))
        #expect(Self.retracts(directives) == ["b"])
        #expect(directives.contains(.memberGone(name: "b", incarnation: "ib")))
        #expect(directory.members["b"] == nil)
    }

    @Test("a new incarnation of a member ends the old life and offers the new one's providers")
    func restart() {
        var directory = EtcdDirectory(name: "a")
        _ = directory.receive(.listed([Self.member("b", "i1"), Self.clock(on: "b", "i1")], revision: 2))
        let directives = directory.receive(.changed(
            [.put(Self.member("b", "i2")), .put(Self.clock(on: "b", "i2", life: 9))], revision: 3))
        #expect(directives.contains(.memberGone(name: "b", incarnation: "i1")))
        #expect(Self.offers(directives) == ["b"])
    }

    @Test("malformed keys and values are ignored, whatever etcd holds")
    func malformed() {
        var directory = EtcdDirectory(name: "a")
        let junk = [
            Self.member("a", "ia"),
            EtcdKeyValue(key: "cordis/members/b", value: Array("not json".utf8)),
            EtcdKeyValue(key: "cordis/members/c", value: Array(#"{"name":"d","incarnation":"x"}"#.utf8)),
            EtcdKeyValue(key: "cordis/members/bad name", value: Array(#"{"name":"bad name","incarnation":"x"}"#.utf8)),
            EtcdKeyValue(key: "cordis/services/b/1", value: Array(#"{"service":1}"#.utf8)),
            EtcdKeyValue(key: "cordis/elsewhere", value: []),
        ]
        #expect(directory.receive(.listed(junk, revision: 2)).isEmpty)
        #expect(directory.members.isEmpty)
        #expect(directory.listings.isEmpty)
    }

    @Test("random sequences of listings, changes and link events keep every offer backed by a listed, unsuspected life")
    func randomSequences() {
        var generator = SystemRandomNumberGenerator()
        let names = ["a", "b", "c"]
        let incarnations = ["i1", "i2"]
        for _ in 0..<200 {
            var directory = EtcdDirectory(name: "a")
            var offered: Set<String> = []
            for step in 0..<60 {
                let node = names.randomElement(using: &generator) ?? "b"
                let incarnation = incarnations.randomElement(using: &generator) ?? "i1"
                let life = Int.random(in: 1...3, using: &generator)
                let event: EtcdDirectory.Event
                switch Int.random(in: 0..<7, using: &generator) {
                case 0: event = .changed([.put(Self.member(node, incarnation))], revision: Int64(step))
                case 1: event = .changed([.put(Self.clock(on: node, incarnation, life: life))], revision: Int64(step))
                case 2: event = .changed([.delete(key: EtcdDirectory.memberKey(node), revision: Int64(step))], revision: Int64(step))
                case 3:
                    event = .changed(
                        [.delete(key: EtcdDirectory.serviceKey(node: node, life: life), revision: Int64(step))], revision: Int64(step))
                case 4: event = .linkUp(member: node, incarnation: incarnation)
                case 5: event = .linkFailed(member: node, incarnation: incarnation)
                default: event = .listed([Self.member(node, incarnation), Self.clock(on: node, incarnation, life: life)], revision: Int64(step))
                }
                for directive in directory.receive(event) {
                    switch directive {
                    case .offer(let listing):
                        // A proxy is made only for a listed, unsuspected life other than this node.
                        let node = listing.announcement.node
                        #expect(node != "a")
                        #expect(directory.members[node]?.incarnation == listing.incarnation)
                        #expect(directory.suspects[node] != listing.incarnation)
                        offered.insert("\(node)/\(listing.incarnation)/\(listing.announcement.life)")
                    case .retract(let listing):
                        let proxy = "\(listing.announcement.node)/\(listing.incarnation)/\(listing.announcement.life)"
                        #expect(offered.remove(proxy) != nil, "retracted without an offer: \(proxy)")
                    case .memberGone, .redial, .restoreOwnKey, .ignoredUnknownKeys: break
                    }
                }
                // Every key the machine counts as offered stands for a proxy the node holds, of the same life.
                for key in directory.offered {
                    guard let listing = directory.listings[key] else {
                        Issue.record("offered key \(key) has no listing")
                        continue
                    }
                    #expect(offered.contains("\(listing.announcement.node)/\(listing.incarnation)/\(listing.announcement.life)"))
                }
            }
        }
    }
}

extension EtcdDirectoryMachineTests {
    @Test("this node's own member key deleted, or missing from a listing, asks for it to be put back; present, it asks nothing")
    func ownKeyRestored() {
        var directory = EtcdDirectory(name: "a")
        #expect(!directory.receive(.listed([Self.member("a", "ia"), Self.member("b", "ib")], revision: 2)).contains(.restoreOwnKey))
        #expect(directory.receive(.changed([.delete(key: EtcdDirectory.memberKey("a"), revision: 3)], revision: 3)) == [.restoreOwnKey])
        #expect(directory.receive(.listed([Self.member("b", "ib")], revision: 4)).contains(.restoreOwnKey))
        #expect(!directory.receive(.changed([.delete(key: EtcdDirectory.memberKey("b"), revision: 5)], revision: 5)).contains(.restoreOwnKey))
    }

    @Test("after any sequence of listings, changes and link events, exactly the eligible listings are offered", arguments: 1...6)
    func offeredIsAlwaysTheEligibleSet(seed: UInt64) {
        var random = SeededGenerator(seed: seed)
        var directory = EtcdDirectory(name: "a")
        var revision: Int64 = 1
        let names = ["a", "b", "c", "d"], incarnations = ["i1", "i2"], lives = [1, 2, 3]
        func pick<T>(_ values: [T]) -> T { values[Int(random.next() % UInt64(values.count))] }
        func change() -> EtcdChange {
            revision += 1
            switch random.next() % 4 {
            case 0: return .put(Self.member(pick(names), pick(incarnations)))
            case 1: return .delete(key: EtcdDirectory.memberKey(pick(names)), revision: revision)
            case 2: return .put(Self.clock(on: pick(names), pick(incarnations), life: pick(lives), modRevision: revision))
            default: return .delete(key: EtcdDirectory.serviceKey(node: pick(names), life: pick(lives)), revision: revision)
            }
        }
        // Offered: every listing of a listed member's life that no failed link suspects and that was
        // not withdrawn over a link.
        func eligible() -> Set<String> {
            Set(directory.listings.filter { key, listing in
                let node = listing.announcement.node
                return directory.members[node]?.incarnation == listing.incarnation
                    && directory.suspects[node] != listing.incarnation && directory.withdrawnOnLink[key] == nil
            }.keys)
        }
        for step in 0..<3_000 {
            let event: EtcdDirectory.Event
            switch random.next() % 10 {
            case 0...3: event = .changed((0...(random.next() % 4)).map { _ in change() }, revision: revision)
            case 4: event = .linkUp(member: pick(names), incarnation: pick(incarnations))
            case 5: event = .linkClosed(member: pick(names))
            case 6: event = .linkFailed(member: pick(names), incarnation: pick(incarnations))
            case 7: event = .withdrawnOverLink(member: pick(names), life: pick(lives))
            case 8: event = .announcedOverLink(member: pick(names), life: pick(lives))
            default:
                // A listing: some of what is listed now, and some new keys.
                var kvs = directory.members.values.sorted { $0.name < $1.name }.filter { _ in random.next() % 4 != 0 }.map {
                    Self.member($0.name, $0.incarnation)
                }
                kvs += directory.listings.sorted { $0.key < $1.key }.map(\.value).filter { _ in random.next() % 4 != 0 }.map {
                    Self.clock(on: $0.announcement.node, $0.incarnation, life: $0.announcement.life, modRevision: revision)
                }
                kvs += (0..<(random.next() % 3)).map { _ in Self.clock(on: pick(names), pick(incarnations), life: pick(lives), modRevision: revision) }
                revision += 1
                event = .listed(kvs, revision: revision)
            }
            _ = directory.receive(event)
            #expect(directory.offered == eligible(), "seed \(seed), step \(step): \(event)")
            if directory.offered != eligible() { return }
        }
    }
}

