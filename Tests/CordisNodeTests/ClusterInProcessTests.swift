import Cordis
@testable import CordisNode
import CordisProcessTesting
import CordisWire
import Foundation
import Testing

/// Two `Node`s in this process over real Unix sockets, driven into the link races that a real cluster
/// meets only by chance: a second link of the same life, an announcement arriving on a link that was
/// replaced, two overlapping handshakes for one name.
@Suite("Cluster: two nodes in one process")
@CordisActor
struct ClusterInProcessTests {
    /// A node named `name` listening on a socket in `folder`, running the built-in catalog.
    static func node(
        _ name: String, entries: [Entry], peers: [Node] = [], folder: TestFolder,
        heartbeatInterval: Duration = .milliseconds(100), heartbeatTimeout: Duration = .seconds(2)
    ) throws -> Node {
        var configuration = NodeConfiguration(
            name: name, listen: [.unix(path: folder.path("\(name).sock"))],
            peers: peers.flatMap(\.listeningAddresses), heartbeatInterval: heartbeatInterval,
            heartbeatTimeout: heartbeatTimeout, withdrawTimeout: .seconds(2))
        configuration.reconnectBackoff = (.milliseconds(20), .milliseconds(200))
        return try Node(
            configuration: configuration, catalog: BuiltinCatalog.plugins(node: name),
            remoteServices: BuiltinCatalog.remoteServices, store: InMemoryEntryStore(EntryTree(entries: entries)))
    }

    /// Waits until `condition` holds, at most `timeout`; records an issue naming `what` when it does not.
    ///
    /// The condition is checked again after each turn of the event loop of any of `nodes` (the loops that
    /// bring the changes: messages, closed links, heartbeats): waiting is for a node to do something, never
    /// a sleep. A no-op timer on each loop at the deadline ends the wait even when nothing else happens.
    @discardableResult
    static func eventually(
        _ what: String, on nodes: [Node], timeout: Duration = .seconds(10), _ condition: @CordisActor () -> Bool
    ) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        let loops = nodes.map(\.loop)
        let timers = loops.map { loop in (loop, loop.schedule(after: timeout) {}) }
        defer { for (loop, timer) in timers { loop.cancelTimer(timer) } }
        while ContinuousClock.now < deadline {
            if condition() { return true }
            await withTaskGroup(of: Void.self) { group in
                for turns in loops.map(\.turns) { group.addTask { await turns.next() } }
                await group.next()
                group.cancelAll()
            }
        }
        if condition() { return true }
        Issue.record("timed out after \(timeout) waiting for \(what)")
        return false
    }

    /// Records every state change of the fiber of `entry` on `node`.
    final class StateLog {
        var states: [FiberState] = []
        var handle: EffectHandle?
    }

    static func watch(_ entry: String, on node: Node) throws -> StateLog {
        let log = StateLog()
        let fiber = node.loader.fiber(for: entry)
        log.handle = try node.context.on(StatusEvent.self) { change in
            if change.fiber === fiber { log.states.append(change.fiber.state) }
        }
        return log
    }

    /// A (provider of `clock`) and b (a greeter consuming it), b dialling a; returns once b's greeter is active.
    static func pair(folder: TestFolder) async throws -> (a: Node, b: Node) {
        let a = try node("a", entries: [Entry(id: "clock", plugin: "clock")], folder: folder)
        try await a.start()
        let b = try node("b", entries: [Entry(id: "greeter", plugin: "greeter")], peers: [a], folder: folder)
        try await b.start()
        try #require(await eventually("b's greeter to be active", on: [a, b]) { b.loader.fiber(for: "greeter")?.state == .active })
        return (a, b)
    }

    @Test("A second link of the same life is closed without any visible change, and the proxy still goes when its node dies")
    func duplicateLinkOfTheSameLife() async throws {
        let folder = try TestFolder()
        defer { folder.remove() }
        let (a, b) = try await Self.pair(folder: folder)
        let greeter = try Self.watch("greeter", on: b)
        let original = try #require(a.link(to: "b")?.link)
        let replaced = try #require(b.link(to: "a"))
        let announcement = try #require(a.state.exports.exports.values.first?.announcement)

        // a dials b once more (the direction the old rule preferred); b takes its end into use first.
        let extra = try await Link.connect(
            to: try #require(b.listeningAddresses.first), on: a.loop, configuration: a.handshakeConfiguration(),
            limits: a.limits, options: a.linkOptions)
        try #require(await Self.eventually("b to take its end of the second link", on: [a, b]) { b.state.links(of: "a").count == 2 })
        let second = try #require(b.state.links(of: "a").first { $0 != replaced.id }.flatMap { b.peers[$0] })
        // a's announcement read from either link of its life, in any order, is one provider.
        b.handle(.announce(announcement), from: second)
        b.handle(.announce(announcement), from: replaced)
        #expect(b.state.proxies.live.count == 1)
        a.adopt(extra)
        // One of the two links goes at a; b follows.
        try #require(await Self.eventually("one of a's two links to b to close", on: [a, b]) {
            original.connection.isClosed != extra.connection.isClosed
        })
        let survivor = original.connection.isClosed ? extra : original
        try #require(await Self.eventually("b to keep one link to a", on: [a, b]) { b.connectedPeers == ["a"] && a.connectedPeers == ["b"] })
        // A call over the surviving link proves b has read everything a sent before it.
        _ = try await b.call(peer: "a", service: "clock", realm: nil, method: "now", arguments: [:])
        await b.loader.settled()
        #expect(greeter.states.isEmpty, "b's greeter changed state: \(greeter.states)")
        #expect(!survivor.connection.isClosed)

        // a dies (its links cut, nothing withdrawn): b's greeter goes pending.
        a.crashForTesting()
        #expect(await Self.eventually("b's greeter to go pending", on: [b]) { b.loader.fiber(for: "greeter")?.state == .pending })
        await b.stop()
    }

    /// Links to `node` from impostors named `name`, one per incarnation, each through a listener of the test
    /// whose handshakes all ran with configurations taken before any of them was adopted.
    static func overlappingLinks(
        to node: Node, name: String, incarnations: [String], folder: TestFolder
    ) async throws -> (responders: [Link], initiators: [Link]) {
        let path = folder.path("side-\(name).sock")
        let listener = try node.loop.listen(on: .unix(path: path), options: ListenerOptions(limits: node.limits))
        defer { listener.close() }
        let configurations = incarnations.map { _ in node.handshakeConfiguration() }
        var iterator = listener.connections.makeAsyncIterator()
        var initiators: [Link] = []
        var responders: [Link] = []
        for (index, incarnation) in incarnations.enumerated() {
            let identity = PeerIdentity(role: .node, name: name, incarnation: incarnation)
            async let dialled = Link.connect(
                to: .unix(path: path), on: node.loop, configuration: HandshakeConfiguration(identity: identity, secrets: nil))
            let connection = try #require(await iterator.next())
            let accepted = try await Link.establish(
                connection, side: .responder, configuration: configurations[index], options: node.linkOptions)
            initiators.append(try await dialled)
            responders.append(accepted)
        }
        return (responders, initiators)
    }

    @Test("A link adopted later than the heartbeat timeout after its handshake is pinged before it is judged: a peer that answers stays")
    func lateAdoptionIsNotSilence() async throws {
        let folder = try TestFolder()
        defer { folder.remove() }
        let interval = Duration.milliseconds(50)
        let timeout = Duration.milliseconds(400)
        let a = try Self.node("a", entries: [], folder: folder, heartbeatInterval: interval, heartbeatTimeout: timeout)
        try await a.start()
        // The link is up but not yet taken into use, as when the node's actor was busy (a plugin blocking
        // it, a loaded machine) while the handshake completed; its peer sends nothing unasked, but
        // answers pings (a `Link` does, on the loop thread).
        let (responders, initiators) = try await Self.overlappingLinks(to: a, name: "x", incarnations: ["old"], folder: folder)
        let established = responders[0].lastHeard
        // The scenario itself, not a synchronisation: the link stays unadopted past the timeout.
        try await ContinuousClock().sleep(until: established + timeout + interval)
        a.adopt(responders[0])
        let adopted = ContinuousClock.now
        // Pongs heard well after the adoption: the node pinged, and the peer answered, for several beats.
        #expect(await Self.eventually("pongs from x, or x's link closing", on: [a], timeout: .seconds(10)) {
            a.state.membership.session(of: "x") == nil || responders[0].lastHeard > adopted + interval * 4
        })
        #expect(a.link(to: "x")?.link === responders[0], "the link to x was closed after its adoption")
        #expect(!responders[0].connection.isClosed)
        for link in initiators { link.close() }
        await a.stop()
    }

    @Test("Two overlapping handshakes for one name: the live member stays, the newcomer is refused, a second link of its life displaces nothing")
    func overlappingHandshakesForOneName() async throws {
        let folder = try TestFolder()
        defer { folder.remove() }
        for name in ["x", "0x"] {  // after and before "a": either side may be the one that sorts first
            let a = try Self.node("a", entries: [], folder: folder)
            try await a.start()
            let (responders, initiators) = try await Self.overlappingLinks(
                to: a, name: name, incarnations: ["old", "new", "old"], folder: folder)
            a.adopt(responders[0])
            a.adopt(responders[1])
            a.adopt(responders[2])
            #expect(await Self.eventually("the newcomer's link to close", on: [a]) { initiators[1].connection.isClosed })
            #expect(a.state.membership.members[name]?.incarnation == "old")
            #expect(a.link(to: name)?.link === responders[0])
            // Why the live link closed, if it did (its reason, or nil when closed without one).
            #expect(!responders[0].connection.isClosed, "\(String(describing: responders[0].connection.closeError))")
            #expect(a.connectedPeers == [name])
            for link in initiators { link.close() }
            await a.stop()
        }
    }
}
