import Cordis
@testable import CordisNode
import CordisProcessTesting
import CordisWire
import Foundation
import Synchronization
import Testing

/// A test service: echoes, makes large results, waits until cancelled, or never returns.
@Remote
protocol EchoAPI: Sendable {
    func echo(_ text: String) async throws -> String
    func repeated(_ text: String, times: Int) async throws -> String
    func hang() async throws -> Int
    func ignore() async throws -> Int
}

enum EchoServiceKey: RemoteServiceKey {
    typealias Value = any EchoAPI
    typealias Interface = EchoAPIRemote
    static let name = "echo"
}

/// What the test plugins let the tests see and do.
@CordisActor
final class EchoProbe {
    var cancelled = 0
    var stuck: [CheckedContinuation<Void, Never>] = []
    /// The context of the `late` plugin's fiber, which provides nothing until a test makes it.
    var late: Context?

    func release() {
        for continuation in stuck { continuation.resume() }
        stuck.removeAll()
    }
}

@CordisActor
final class Echo: EchoAPI {
    let probe: EchoProbe
    init(probe: EchoProbe) { self.probe = probe }

    func echo(_ text: String) async throws -> String { text }

    func repeated(_ text: String, times: Int) async throws -> String {
        String(repeating: text, count: max(0, min(times, 10_000_000)))
    }

    func hang() async throws -> Int {
        do {
            try await Task.sleep(for: .seconds(3600))
        } catch {
            probe.cancelled += 1
            throw error
        }
        return 0
    }

    func ignore() async throws -> Int {
        await withCheckedContinuation { probe.stuck.append($0) }
        return 0
    }
}

@CordisActor
final class Flag {
    var value = true
}

/// A peer made by the test: a bare link with a role and name of its choice, collecting what it receives.
final class ScriptedPeer: Sendable {
    let link: Link
    private let inbox = Mutex<[WireMessage]>([])

    init(link: Link) {
        self.link = link
        Task { [self] in
            do {
                for try await message in link.messages { self.inbox.withLock { $0.append(message) } }
            } catch {}
        }
    }

    static func connect(_ name: String, role: PeerRole = .node, to node: Node) async throws -> ScriptedPeer {
        let identity = PeerIdentity(role: role, name: name, incarnation: "\(name)-1")
        let link = try await Link.connect(
            to: try #require(node.listeningAddresses.first), on: node.loop,
            configuration: HandshakeConfiguration(identity: identity, secrets: nil))
        return ScriptedPeer(link: link)
    }

    var received: [WireMessage] { inbox.withLock { $0 } }

    var withdrawals: [ServiceProvider] {
        received.compactMap { if case .withdraw(let provider) = $0 { provider } else { nil } }
    }

    var announcements: [ServiceAnnouncement] {
        received.compactMap { if case .announce(let announcement) = $0 { announcement } else { nil } }
    }

    func send(_ message: WireMessage) throws { try link.enqueue(message) }
}

/// Calls, roles and exports between `Node`s in one process over real Unix sockets.
@Suite("Cluster: calls, roles and exports in one process")
@CordisActor
struct ClusterInProcessCallTests {
    static func node(
        _ name: String, entries: [Entry], peers: [Node] = [], probe: EchoProbe, folder: TestFolder,
        callTimeout: Duration = .seconds(30), withdrawTimeout: Duration = .seconds(30), maxFrameSize: Int = 16 * 1024,
        advertise: [Address] = []
    ) throws -> Node {
        var configuration = NodeConfiguration(
            name: name, listen: [.unix(path: folder.path("\(name).sock"))], advertise: advertise,
            peers: peers.flatMap(\.listeningAddresses), heartbeatInterval: .milliseconds(100),
            heartbeatTimeout: .seconds(5), callTimeout: callTimeout, withdrawTimeout: withdrawTimeout,
            maxFrameSize: maxFrameSize)
        configuration.reconnectBackoff = (.milliseconds(20), .milliseconds(200))
        var catalog = BuiltinCatalog.plugins(node: name)
        catalog.register(FunctionPlugin<NoConfig>(name: "echo", provides: [EchoServiceKey.self]) { _, _, scope in
            try scope.ctx.provide(EchoServiceKey.self, Echo(probe: probe))
        }, as: "echo")
        catalog.register(FunctionPlugin<NoConfig>(name: "late") { _, _, scope in probe.late = scope.ctx }, as: "late")
        // A consumer of `clock` whose teardown waits until the test releases it.
        catalog.register(FunctionPlugin<NoConfig>(name: "holder", inject: [ClockServiceKey.self]) { _, _, scope in
            probe.late = scope.ctx
            try scope.collect { await withCheckedContinuation { probe.stuck.append($0) } }
        }, as: "holder")
        var services = BuiltinCatalog.remoteServices
        services.register(EchoServiceKey.self)
        return try Node(
            configuration: configuration, catalog: catalog, remoteServices: services,
            store: InMemoryEntryStore(EntryTree(entries: entries)))
    }

    /// a provides `echo`; b is linked to it.
    static func pair(
        probe: EchoProbe, folder: TestFolder, callTimeout: Duration = .seconds(30)
    ) async throws -> (a: Node, b: Node) {
        let a = try node("a", entries: [Entry(id: "echo", plugin: "echo")], probe: probe, folder: folder, callTimeout: callTimeout)
        try await a.start()
        let b = try node("b", entries: [], peers: [a], probe: probe, folder: folder)
        try await b.start()
        try #require(await ClusterInProcessTests.eventually("a and b to be linked", on: [a, b]) {
            a.connectedPeers == ["b"] && b.connectedPeers == ["a"]
        })
        return (a, b)
    }

    static func code(of body: () async throws -> JSONDocument) async -> RemoteCallError.Code? {
        do {
            _ = try await body()
            return nil
        } catch let error as RemoteCallError {
            return error.code
        } catch {
            Issue.record("not a RemoteCallError: \(error)")
            return nil
        }
    }

    @Test("A result or a request larger than the frame limit fails that call with too-large; the link stays up")
    func tooLarge() async throws {
        let folder = try TestFolder()
        defer { folder.remove() }
        let probe = EchoProbe()
        let (a, b) = try await Self.pair(probe: probe, folder: folder)
        let session = try #require(b.state.membership.session(of: "a"))
        #expect(await Self.code {
            try await b.call(peer: "a", service: "echo", realm: nil, method: "repeated", arguments: ["_0": "x", "times": 100_000])
        } == .tooLarge)
        #expect(await Self.code {
            try await b.call(
                peer: "a", service: "echo", realm: nil, method: "echo",
                arguments: ["_0": .string(String(repeating: "y", count: 100_000))])
        } == .tooLarge)
        let value = try await b.call(peer: "a", service: "echo", realm: nil, method: "echo", arguments: ["_0": "hi"])
        #expect(value.value == "hi")
        #expect(b.state.membership.session(of: "a") == session && b.state.links(of: "a") == [session])
        await b.stop()
        await a.stop()
    }

    /// a serves with its default 30 s timeout, so the call stays in its slot until the caller cancels it
    /// (with a short timeout the slot was also freed by the timeout, and a loaded machine could miss the
    /// moment it was taken).
    @Test("cancel frees the inbound slot and cancels the serving task")
    func cancelFreesTheSlot() async throws {
        let folder = try TestFolder()
        defer { folder.remove() }
        let probe = EchoProbe()
        let (a, b) = try await Self.pair(probe: probe, folder: folder)
        let served = try #require(a.link(to: "b"))
        let caller = Task { try await b.call(peer: "a", service: "echo", realm: nil, method: "hang", arguments: [:]) }
        try #require(await ClusterInProcessTests.eventually("a to serve the call", on: [a, b]) { served.inbound.count == 1 })
        caller.cancel()
        #expect(await ClusterInProcessTests.eventually("the slot to be freed and the task cancelled", on: [a, b]) {
            served.inbound.count == 0 && probe.cancelled == 1
        })
        await b.stop()
        await a.stop()
    }

    @Test("A method that never returns is answered timeout by the serving node at its call timeout, and its slot is freed")
    func servingTimeout() async throws {
        let folder = try TestFolder()
        defer { folder.remove() }
        let probe = EchoProbe()
        let (a, b) = try await Self.pair(probe: probe, folder: folder, callTimeout: .milliseconds(500))
        let served = try #require(a.link(to: "b"))
        // b waits up to its own 30 s; a answers after its 500 ms.
        let started = ContinuousClock.now
        #expect(await Self.code {
            try await b.call(peer: "a", service: "echo", realm: nil, method: "ignore", arguments: [:])
        } == .timeout)
        #expect(ContinuousClock.now - started < .seconds(10))
        #expect(served.inbound.count == 0)
        probe.release()
        await b.stop()
        await a.stop()
    }

    @Test("A console may not announce or acknowledge; a member may announce and withdraw only its own providers")
    func rolesAndSenders() async throws {
        let folder = try TestFolder()
        defer { folder.remove() }
        let probe = EchoProbe()
        let a = try Self.node("a", entries: [], probe: probe, folder: folder)
        try await a.start()
        let clock = try #require(a.remoteServices.service(named: "clock"))
        func announcement(node: String) -> ServiceAnnouncement {
            ServiceAnnouncement(
                service: "clock", realm: nil, interface: clock.interface, interfaceVersion: clock.version, node: node,
                fiber: 3, life: 1)
        }
        let console = try await ScriptedPeer.connect("operator", role: .console, to: a)
        let member = try await ScriptedPeer.connect("z", to: a)
        try #require(await ClusterInProcessTests.eventually("z to be linked", on: [a]) { a.connectedPeers == ["z"] })
        try console.send(.announce(announcement(node: "operator")))
        try member.send(.announce(announcement(node: "y")))
        try member.send(.announce(announcement(node: "z")))
        #expect(await ClusterInProcessTests.eventually("z's own announcement to make a proxy", on: [a]) { a.state.proxies.live.count == 1 })
        try console.send(.withdraw(announcement(node: "z").provider))
        try member.send(.withdraw(announcement(node: "y").provider))
        // A call from the console is served after everything it sent before (one link, in order).
        try console.send(.call(RemoteCall(id: 1, service: "nothing", realm: nil, method: "m", args: [:])))
        #expect(await ClusterInProcessTests.eventually("the console's call to be answered", on: [a]) {
            console.received.contains { if case .error(let error) = $0 { error.id == 1 } else { false } }
        })
        try member.send(.call(RemoteCall(id: 1, service: "nothing", realm: nil, method: "m", args: [:])))
        #expect(await ClusterInProcessTests.eventually("z's call to be answered", on: [a]) {
            member.received.contains { if case .error(let error) = $0 { error.id == 1 } else { false } }
        })
        #expect(a.state.proxies.live.map(\.node) == ["z"])
        console.link.close()
        member.link.close()
        await a.stop()
    }

    @Test("A withdrawal sent twice is acknowledged twice, both only after the consumers here unloaded")
    func repeatedWithdrawalWaitsForTheConsumers() async throws {
        let folder = try TestFolder()
        defer { folder.remove() }
        let probe = EchoProbe()
        let a = try Self.node("a", entries: [Entry(id: "holder", plugin: "holder")], probe: probe, folder: folder)
        try await a.start()
        let clock = try #require(a.remoteServices.service(named: "clock"))
        let announcement = ServiceAnnouncement(
            service: "clock", realm: nil, interface: clock.interface, interfaceVersion: clock.version, node: "z",
            fiber: 3, life: 1)
        let z = try await ScriptedPeer.connect("z", to: a)
        try #require(await ClusterInProcessTests.eventually("z to be linked", on: [a]) { a.connectedPeers == ["z"] })
        try z.send(.announce(announcement))
        try #require(await ClusterInProcessTests.eventually("the holder to run on z's clock", on: [a]) { probe.late != nil })
        try z.send(.withdraw(announcement.provider))
        try z.send(.withdraw(announcement.provider))
        // Answered after both withdrawals were taken (one link, in order): no acknowledgement may precede it.
        try z.send(.call(RemoteCall(id: 1, service: "nothing", realm: nil, method: "m", args: [:])))
        try #require(await ClusterInProcessTests.eventually("the call to be answered and the holder to unload", on: [a]) {
            z.received.contains { if case .error(let error) = $0 { error.id == 1 } else { false } } && probe.stuck.count == 1
        })
        let acknowledgements = { z.received.filter { if case .withdrawAck = $0 { true } else { false } }.count }
        #expect(acknowledgements() == 0, "\(z.received)")
        probe.release()
        #expect(await ClusterInProcessTests.eventually("both acknowledgements", on: [a]) { acknowledgements() == 2 })
        z.link.close()
        await a.stop()
    }

    @Test("A service provided by an already-active fiber is announced; disposed or failing its check, it is withdrawn")
    func exportsFollowTheRegistry() async throws {
        let folder = try TestFolder()
        defer { folder.remove() }
        let probe = EchoProbe()
        let a = try Self.node("a", entries: [Entry(id: "late", plugin: "late")], probe: probe, folder: folder, withdrawTimeout: .seconds(2))
        try await a.start()
        let b = try Self.node("b", entries: [], peers: [a], probe: probe, folder: folder)
        try await b.start()
        try #require(await ClusterInProcessTests.eventually("a and b to be linked", on: [a, b]) { b.connectedPeers == ["a"] })
        let late = try #require(probe.late)
        let handle = try late.provide(ClockServiceKey.self, NodeClock(node: "a"))
        #expect(await ClusterInProcessTests.eventually("b to have a proxy of a's clock", on: [a, b]) { b.state.proxies.live.count == 1 })
        try await handle.dispose()
        #expect(await ClusterInProcessTests.eventually("b's proxy to go", on: [a, b]) { b.state.proxies.live.isEmpty })
        let passing = Flag()
        try late.provide(ClockServiceKey.self, NodeClock(node: "a"), check: { passing.value })
        #expect(await ClusterInProcessTests.eventually("b to have a proxy again", on: [a, b]) { b.state.proxies.live.count == 1 })
        passing.value = false
        late.recheck(ClockServiceKey.self)
        #expect(await ClusterInProcessTests.eventually("b's proxy to go when the check fails", on: [a, b]) { b.state.proxies.live.isEmpty })
        await b.stop()
        await a.stop()
    }

    @Test("A late acknowledgement of an earlier life counts nothing for the current withdrawal")
    func lateAcknowledgement() async throws {
        let folder = try TestFolder()
        defer { folder.remove() }
        let probe = EchoProbe()
        // The deadline ends the first withdrawal (z never acknowledges it in time); it must also leave the
        // second one running while z's late acknowledgement and a call cross: with 300 ms, two test
        // processes at once made those few messages take longer, and the deadline ended it.
        let a = try Self.node(
            "a", entries: [Entry(id: "late", plugin: "late"), Entry(id: "echo", plugin: "echo")], probe: probe,
            folder: folder, withdrawTimeout: .seconds(2))
        try await a.start()
        let z = try await ScriptedPeer.connect("z", to: a)
        try #require(await ClusterInProcessTests.eventually("z to be linked", on: [a]) { a.connectedPeers == ["z"] })
        let late = try #require(probe.late)
        let first = try late.provide(ClockServiceKey.self, NodeClock(node: "a"))
        try await first.dispose()
        // z does not answer: the first withdrawal goes ahead at its deadline.
        try #require(await ClusterInProcessTests.eventually("the first withdrawal to end", on: [a]) {
            z.withdrawals.count == 1 && !a.state.exports.isWithdrawing
        })
        let earlier = try #require(z.withdrawals.first)
        let second = try late.provide(ClockServiceKey.self, NodeClock(node: "a"))
        try #require(await ClusterInProcessTests.eventually("the second life to be announced", on: [a]) {
            z.announcements.filter { $0.service == "clock" }.count == 2
        })
        await withTaskGroup(of: Void.self) { group in
            group.addTask { try? await second.dispose() }
            #expect(await ClusterInProcessTests.eventually("the second withdrawal to reach z", on: [a]) { z.withdrawals.count == 2 })
            try? z.send(.withdrawAck(earlier))
            // A call answered after the acknowledgement proves a has read it.
            try? z.send(.call(RemoteCall(id: 9, service: "echo", realm: nil, method: "echo", args: ["_0": "x"])))
            #expect(await ClusterInProcessTests.eventually("z's call to be answered", on: [a]) {
                z.received.contains { if case .result(let result) = $0 { result.id == 9 } else { false } }
            })
            #expect(a.state.exports.isWithdrawing, "the late acknowledgement ended the second withdrawal")
            if let current = z.withdrawals.last { try? z.send(.withdrawAck(current)) }
            await group.waitForAll()
        }
        #expect(await ClusterInProcessTests.eventually("the current acknowledgement to end the withdrawal", on: [a]) {
            !a.state.exports.isWithdrawing
        })
        z.link.close()
        await a.stop()
    }

    @Test("At stop, every export is withdrawn at once: a silent peer gets all withdrawals before any deadline")
    func stopWithdrawsTogether() async throws {
        let folder = try TestFolder()
        defer { folder.remove() }
        let probe = EchoProbe()
        let a = try Self.node(
            "a", entries: [Entry(id: "clock", plugin: "clock"), Entry(id: "counter", plugin: "counter")], probe: probe,
            folder: folder, withdrawTimeout: .seconds(60))
        try await a.start()
        let z = try await ScriptedPeer.connect("z", to: a)
        try #require(await ClusterInProcessTests.eventually("z to get both announcements", on: [a]) { z.announcements.count == 2 })
        let stopping = Task { await a.stop() }
        #expect(await ClusterInProcessTests.eventually("z to get both withdrawals", on: [a]) { z.withdrawals.count == 2 })
        // z's link goes: nothing more to wait for, the stop completes.
        z.link.close()
        await stopping.value
    }

    @Test("Every task has an owner that ends it: handshakes of accepted links, links' readers, dials of superseded addresses")
    func tasksEnd() async throws {
        let folder = try TestFolder()
        defer { folder.remove() }
        let probe = EchoProbe()
        let a = try Self.node("a", entries: [], probe: probe, folder: folder)
        try await a.start()
        for index in 0 ..< 20 {
            let console = try await ScriptedPeer.connect("operator\(index)", role: .console, to: a)
            console.link.close()
        }
        // (Handshakes are no tasks: each runs on the event loop and ends with its connection at the latest.)
        #expect(await ClusterInProcessTests.eventually("every console session to end", on: [a]) {
            !a.peers.all.contains { $0.role == .console }
        })
        // A member learned on one address, then restarted on another: the first address's dialler ends.
        a.carryOut(a.state.receive(.directory(.peerListed([Member(name: "m", addresses: ["unix:\(folder.path("m1.sock"))"], incarnation: "m1")]))))
        #expect(a.state.dials.kept.count == 1)
        let restarted = try await ScriptedPeer.connect("m", to: a)
        _ = restarted
        #expect(await ClusterInProcessTests.eventually("m to be linked", on: [a]) { a.connectedPeers == ["m"] })
        // The first address is no longer dialled: kept at most until a dial of it still on its way ends.
        #expect(
            a.state.dials.kept.values.allSatisfy { $0.phase == .stopping },
            "addresses still dialled: \(a.state.dials.kept.keys.sorted())")
        // The dial of the first address on its way, if any, ends (no socket answers there), and the address
        // goes with it.
        #expect(await ClusterInProcessTests.eventually("the dials on their way to end", on: [a]) {
            a.linking.dials.isEmpty && a.state.dials.kept.isEmpty
        })
        restarted.link.close()
        await a.stop()
    }

    @Test("An interface mismatch is reported while that provider life is announced, and cleared when it is withdrawn or its member is lost")
    func mismatchIsCleared() async throws {
        let folder = try TestFolder()
        defer { folder.remove() }
        let probe = EchoProbe()
        let a = try Self.node("a", entries: [], probe: probe, folder: folder)
        try await a.start()
        let clock = try #require(a.remoteServices.service(named: "clock"))
        let other = ServiceAnnouncement(
            service: "clock", realm: nil, interface: clock.interface, interfaceVersion: "other", node: "z", fiber: 3, life: 1)
        let z = try await ScriptedPeer.connect("z", to: a)
        try z.send(.announce(other))
        #expect(await ClusterInProcessTests.eventually("the mismatch to be reported", on: [a]) { a.mismatches["clock"] != nil })
        try z.send(.withdraw(other.provider))
        #expect(await ClusterInProcessTests.eventually("the mismatch to be cleared by the withdrawal", on: [a]) { a.mismatches.isEmpty })
        try z.send(.announce(other))
        #expect(await ClusterInProcessTests.eventually("the mismatch to be reported again", on: [a]) { a.mismatches["clock"] != nil })
        z.link.close()
        #expect(await ClusterInProcessTests.eventually("the mismatch to be cleared when z is lost", on: [a]) { a.mismatches.isEmpty })
        await a.stop()
    }
}
