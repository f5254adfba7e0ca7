import CordisDiscovery
@testable import CordisNode
import CordisWire
import Testing

/// `MeshGossip`, the embedded mesh's discovery, alone and beside `Membership` as the node drives them:
/// scripted events in, directives asserted, no sockets.
@Suite("The mesh's discovery: seeds, learned members, dialling, lives ended with their links")
struct MeshGossipMachineTests {
    @Test("What a member list can make a node keep and dial is bounded: members, addresses per member, valid names")
    func learnedListsAreBounded() {
        var view = MeshGossip(name: "a", ownAddresses: [], seeds: [])
        let many = (0..<5_000).map { Member(name: "m\($0)", addresses: ["unix:/tmp/m\($0).sock"], incarnation: "i") }
        let directives = view.receive(.peerListed(many))
        #expect(view.known.count == MeshGossip.maxMembers)
        #expect(directives.count == MeshGossip.maxMembers)
        let wide = Member(name: "m0", addresses: (0..<100).map { "unix:/tmp/w\($0).sock" }, incarnation: "i")
        var fresh = MeshGossip(name: "a", ownAddresses: [], seeds: [])
        #expect(fresh.receive(.peerListed([wide])).count == MeshGossip.maxAddresses)
        #expect(fresh.known["m0"]?.addresses.count == MeshGossip.maxAddresses)
        #expect(fresh.receive(.peerListed([Member(name: "bad name/..", addresses: ["unix:/tmp/x"], incarnation: "i")])) == [])
        #expect(fresh.known["bad name/.."] == nil)
    }

    @Test("Learned members are dialled while unlinked; a restart on new addresses stops the old diallers")
    func dialling() {
        var links = Membership(name: "a")
        var view = MeshGossip(name: "a", ownAddresses: ["unix:/a"], seeds: ["unix:/seed"])
        #expect(view.receive(.started) == [.dial("unix:/seed")])
        #expect(view.receive(.peerListed([
            Member(name: "a", addresses: ["unix:/a"], incarnation: "a1"),
            Member(name: "b", addresses: ["unix:/b1", "unix:/a"], incarnation: "b1"),
        ])) == [.dial("unix:/b1")])
        #expect(links.receive(.handshakeCompleted(
            session: 1, side: .initiator, name: "b", incarnation: "b1", addresses: ["unix:/b1"])) == [.adopt(session: 1, member: "b")])
        #expect(view.receive(.linked(member: "b", incarnation: "b1", addresses: ["unix:/b1"])) == [
            .sendMembers(to: "b"),
        ])
        #expect(links.receive(.linkClosed(session: 1)) == [.withdrawAll(member: "b", incarnation: "b1")])
        #expect(view.receive(.unlinked(member: "b", incarnation: "b1", inOrder: false)) == [
            .dropProxies(member: "b", incarnation: "b1"),
        ])
        #expect(links.receive(.handshakeCompleted(
            session: 2, side: .responder, name: "b", incarnation: "b2", addresses: ["unix:/b2"])) == [.adopt(session: 2, member: "b", restarted: true)])
        #expect(view.receive(.linked(member: "b", incarnation: "b2", addresses: ["unix:/b2"])) == [
            .sendMembers(to: "b"), .stopDialling("unix:/b1"), .dial("unix:/b2"),
        ])
        #expect(view.receive(.forgotten(name: "c")) == [])
    }

    @Test("A member list never replaces what a linked member says of itself")
    func linkedMembersKeepTheirOwnAddresses() {
        var view = MeshGossip(name: "a", ownAddresses: [], seeds: [])
        _ = view.receive(.linked(member: "b", incarnation: "b1", addresses: ["unix:/b1"]))
        #expect(view.receive(.peerListed([Member(name: "b", addresses: ["unix:/elsewhere"], incarnation: "b0")])) == [])
        #expect(view.known["b"] == Member(name: "b", addresses: ["unix:/b1"], incarnation: "b1"))
    }

    @Test("Forgetting a member stops its diallers and keeps its addresses from being dialled again")
    func forgetting() {
        var view = MeshGossip(name: "a", ownAddresses: [], seeds: [])
        _ = view.receive(.peerListed([Member(name: "b", addresses: ["unix:/b1"], incarnation: "b1")]))
        #expect(view.receive(.forgotten(name: "b")) == [.stopDialling("unix:/b1")])
        #expect(view.known["b"] == nil)
        #expect(view.receive(.peerListed([Member(name: "c", addresses: ["unix:/b1"], incarnation: "c1")])) == [])
    }

    @Test("A seed whose dial reached a member is that member's: it waits while the member is linked, and forgetting the member stops it for good")
    func aSeedReachedIsTheMembers() {
        var view = MeshGossip(name: "a", ownAddresses: [], seeds: ["tcp:127.0.0.1:7001"])
        #expect(view.receive(.started) == [.dial("tcp:127.0.0.1:7001")])
        // b advertises another spelling of the seed's address.
        _ = view.receive(.dialled(address: "tcp:127.0.0.1:7001", member: "b"))
        _ = view.receive(.linked(member: "b", incarnation: "b1", addresses: ["tcp:localhost:7001"]))
        #expect(view.owner(of: "tcp:127.0.0.1:7001") == "b")
        #expect(view.addresses(of: "b") == ["tcp:127.0.0.1:7001", "tcp:localhost:7001"])
        _ = view.receive(.unlinked(member: "b", incarnation: "b1", inOrder: false))
        #expect(view.receive(.forgotten(name: "b")) == [.stopDialling("tcp:127.0.0.1:7001"), .stopDialling("tcp:localhost:7001")])
        #expect(view.owner(of: "tcp:127.0.0.1:7001") == nil)
        #expect(view.dialling.isEmpty)
        // Listed again by a peer under the seed's spelling: not dialled, it was forgotten.
        #expect(view.receive(.peerListed([Member(name: "c", addresses: ["tcp:127.0.0.1:7001"], incarnation: "c1")])) == [])
    }

    @Test("Only an address being dialled gets an owner by its dial, and loses it when its dialler stops")
    func reachedOnlyWhileDialled() {
        var view = MeshGossip(name: "a", ownAddresses: [], seeds: [])
        _ = view.receive(.dialled(address: "unix:/x", member: "b"))
        #expect(view.owner(of: "unix:/x") == nil)
        _ = view.receive(.peerListed([Member(name: "b", addresses: ["unix:/b1"], incarnation: "b1")]))
        _ = view.receive(.dialled(address: "unix:/b1", member: "b"))
        // b restarts on new addresses: the old one's dialler stops, and with it what its dial reached.
        #expect(view.receive(.linked(member: "b", incarnation: "b2", addresses: ["unix:/b2"])) == [
            .sendMembers(to: "b"), .stopDialling("unix:/b1"), .dial("unix:/b2"),
        ])
        #expect(view.reached.isEmpty)
        #expect(view.owner(of: "unix:/b1") == nil)
    }

    @Test("The mesh ignores etcd's listings")
    func ignoresTheDirectory() {
        var view = MeshGossip(name: "a", ownAddresses: [], seeds: [])
        #expect(view.receive(.directoryListed([], revision: 1)) == [])
        #expect(view.receive(.directoryChanged([], revision: 2)) == [])
    }
}

/// `EtcdDirectory` as a `MemberDiscovery`: the node's link events mean what they mean in etcd mode.
@Suite("etcd's discovery seen through the seam: idle closes keep a life, failures end it")
struct EtcdDiscoverySeamTests {
    @Test("An idle close keeps the member's proxies; a failure drops them and re-dials the listed life")
    func linkEnds() {
        var directory: any MemberDiscovery = EtcdDirectory(name: "a")
        let member = EtcdDirectoryMachineTests.member("b", "ib")
        _ = directory.receive(.directoryListed([member], revision: 2))
        #expect(directory.known["b"]?.incarnation == "ib")
        #expect(directory.receive(.started).isEmpty)
        #expect(directory.receive(.linked(member: "b", incarnation: "ib", addresses: [])).isEmpty)
        #expect(directory.receive(.unlinked(member: "b", incarnation: "ib", inOrder: true)).isEmpty)
        _ = directory.receive(.linked(member: "b", incarnation: "ib", addresses: []))
        #expect(directory.receive(.unlinked(member: "b", incarnation: "ib", inOrder: false)) == [
            .redial("b", after: .zero), .dropProxies(member: "b", incarnation: "ib"),
        ])
        #expect(directory.receive(.peerListed([Member(name: "c", addresses: ["unix:/c"], incarnation: "c1")])).isEmpty)
        #expect(directory.known["c"] == nil)
    }
}
