import Cordis
@testable import CordisNode
import CordisProcessTesting
import CordisWire
import Foundation
import Testing

/// In-process nodes: the link a node uses closed by its peer as a duplicate.
@Suite("Cluster: the link in use closed as a duplicate", .faultTurns)
@CordisActor
struct ClusterDuplicateCloseTests {
    @Test("A call in flight on the link in use, cut right after a duplicate goodbye, fails with withdrawn; the next link takes over with the proxies kept, nothing withdrawn")
    func callInFlightFailsAndProxiesStay() async throws {
        let folder = try TestFolder()
        defer { folder.remove() }
        let probe = EchoProbe()
        let (a, b) = try await ClusterInProcessCallTests.pair(probe: probe, folder: folder)
        try #require(await ClusterInProcessTests.eventually("b to hold a's echo", on: [a, b]) { b.state.proxies.live.count == 1 })
        let proxies = ProxiesSeen(b)
        let first = try #require(b.state.membership.session(of: "a"))
        let served = try #require(a.link(to: "b"))
        let caller = Task { await ClusterInProcessCallTests.code { try await b.call(peer: "a", service: "echo", realm: nil, method: "ignore", arguments: [:]) } }
        try #require(await ClusterInProcessTests.eventually("a to serve the call", on: [a, b]) { served.inbound.count == 1 })
        // a says the link b uses is a duplicate (as if a used another one) and cuts it at once rather
        // than draining it; b dials again.
        served.link.close(reason: "\(NodeState.duplicatePrefix) a link to b already exists")
        #expect(await caller.value == .withdrawn)
        #expect(await ClusterInProcessTests.eventually("b to use a new link to a", on: [a, b]) {
            b.state.membership.session(of: "a").map { $0 != first } ?? false
        })
        // b kept a's proxy through the change (a withdrawal would have disposed of it) and calls work.
        #expect(ProxiesSeen(b) == proxies)
        #expect(await ClusterInProcessCallTests.code {
            try await b.call(peer: "a", service: "echo", realm: nil, method: "echo", arguments: ["_0": "again"])
        } == nil)
        probe.release()
        await b.stop()
        await a.stop()
    }

    /// a (providing `echo`) and b with two links the test opened, crossed: x (a dialled it, b took it into
    /// use) and y (b dialled it, a took it into use); neither side has taken its end of the other yet.
    /// Both advertise an address where nobody listens, so no dial of their own brings a third link.
    static func crossedLinks(folder: TestFolder, probe: EchoProbe) async throws -> (a: Node, b: Node, x: Link, y: Link) {
        let a = try ClusterInProcessCallTests.node(
            "a", entries: [Entry(id: "echo", plugin: "echo")], probe: probe, folder: folder,
            advertise: [.unix(path: folder.path("nobody-a.sock"))])
        try await a.start()
        let b = try ClusterInProcessCallTests.node(
            "b", entries: [], probe: probe, folder: folder, advertise: [.unix(path: folder.path("nobody-b.sock"))])
        try await b.start()
        let x = try await Link.connect(
            to: try #require(b.listeningAddresses.first), on: a.loop, configuration: a.handshakeConfiguration(),
            limits: a.limits, options: a.linkOptions)
        try #require(await ClusterInProcessTests.eventually("b to use x", on: [a, b]) { b.state.membership.session(of: "a") != nil })
        let y = try await Link.connect(
            to: try #require(a.listeningAddresses.first), on: b.loop, configuration: b.handshakeConfiguration(),
            limits: b.limits, options: b.linkOptions)
        try #require(await ClusterInProcessTests.eventually("a to use y", on: [a, b]) { a.state.membership.session(of: "b") != nil })
        return (a, b, x, y)
    }

    @Test("Crossed links (each side took a different one first): a call b sent on the link a then closes as the duplicate is answered; b keeps a's proxy and its other link")
    func callOnTheDuplicateIsAnswered() async throws {
        let folder = try TestFolder()
        defer { folder.remove() }
        let (a, b, x, y) = try await Self.crossedLinks(folder: folder, probe: EchoProbe())
        // b keeps y as a standby (it sorts second), and reads a's announcements on it.
        b.adopt(y)
        try #require(await ClusterInProcessTests.eventually("b to hold a's echo", on: [a, b]) { b.state.proxies.live.count == 1 })
        let proxies = ProxiesSeen(b)
        let onX = try #require(b.link(to: "a"))
        // b calls a on x, which a has not read yet, and subscribes to a's events on it as a member
        // does: a takes x only now, as its duplicate.
        let caller = Task { try await b.call(peer: "a", service: "echo", realm: nil, method: "echo", arguments: ["_0": "crossed"]) }
        try #require(await ClusterInProcessTests.eventually("b to send the call on x", on: [a, b]) { onX.calls.count == 1 })
        onX.send(.request(ControlRequest(id: 900, command: .subscribe, args: ["follow": true, "history": false, "cluster": false])))
        a.adopt(x)
        let drained = try #require(a.state.drained.first)
        #expect(try await caller.value.value == .string("crossed"))
        #expect(await ClusterInProcessTests.eventually("one link between a and b, y", on: [a, b]) {
            a.state.links(of: "b").count == 1 && b.state.links(of: "a").count == 1
                && b.state.membership.session(of: "a") != onX.id && b.state.membership.session(of: "a") != nil
                && a.state.membership.session(of: "b") != nil
        })
        // What the drained link held on a ended with it (the subscription b made on it).
        #expect(!a.state.subscriptions.subscribers.contains { $0.session == drained })
        // Nothing was withdrawn on the way: b's proxy of a's echo is the one it had, and calls work.
        #expect(ProxiesSeen(b) == proxies)
        #expect(try await b.call(peer: "a", service: "echo", realm: nil, method: "echo", arguments: ["_0": "after"]).value == .string("after"))
        await b.stop()
        await a.stop()
    }

    @Test(
        "Crossed links, the other link not taken yet when a closes the one b uses: a call b makes meanwhile waits for it, answered on it, or fails when the wait ends",
        arguments: [true, false])
    func callWaitsForTheReplacement(replacementComes: Bool) async throws {
        let folder = try TestFolder()
        defer { folder.remove() }
        let (a, b, x, y) = try await Self.crossedLinks(folder: folder, probe: EchoProbe())
        // a takes x as its duplicate while b has not taken y: b waits for its other link.
        a.adopt(x)
        try #require(await ClusterInProcessTests.eventually("b to wait for its other link to a", on: [a, b]) {
            b.state.linkChoice(for: "a") == .wait
        })
        let caller = Task { try await b.call(peer: "a", service: "echo", realm: nil, method: "echo", arguments: ["_0": "waited"]) }
        try #require(await ClusterInProcessTests.eventually("the call to wait", on: [a, b]) { b.peers.linkWaiters(of: "a") == 1 })
        if replacementComes {
            let onY = try #require(b.adopt(y))
            #expect(try await caller.value.value == .string("waited"))
            #expect(b.state.membership.session(of: "a") == onY.id)
        } else {
            // a dies before b takes y: no other link comes, so the wait ends after the handshake
            // timeout, and the call fails with it.
            a.crashForTesting()
            let started = ContinuousClock.now
            await #expect(throws: RemoteCallError.self) { try await caller.value }
            #expect(ContinuousClock.now - started < .seconds(15))
            #expect(b.state.linkChoice(for: "a") != .wait)
        }
        #expect(!b.peers.awaitsAnyLink)
        await b.stop()
        if replacementComes { await a.stop() }
    }
}
