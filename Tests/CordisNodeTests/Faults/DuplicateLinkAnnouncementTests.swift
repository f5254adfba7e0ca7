import Cordis
@testable import CordisNode
import CordisProcessTesting
import CordisWire
import Foundation
import Testing

/// Two links of the same two lives, as when both nodes dial each other at once: whichever link each
/// side keeps, each side ends up with a proxy of every service the other provides. (What a node
/// announced on a link the other side then closed as the duplicate must be announced again.)
@Suite("Faults: two nodes dialling each other at once", .faultTurns)
@CordisActor
struct DuplicateLinkAnnouncementTests {
    @Test("After a second link between the same lives, and either one closed, both sides hold the other's proxies")
    func announcementsSurviveTheDuplicateLink() async throws {
        for closeFirst in [true, false] {
            let folder = try TestFolder()
            defer { folder.remove() }
            let a = try ClusterInProcessTests.node("a", entries: [Entry(id: "clock", plugin: "clock")], folder: folder)
            try await a.start()
            let b = try ClusterInProcessTests.node("b", entries: [Entry(id: "counter", plugin: "counter")], peers: [a], folder: folder)
            try await b.start()
            try #require(await ClusterInProcessTests.eventually("a and b to hold each other's proxies", on: [a, b]) {
                a.state.proxies.live.count == 1 && b.state.proxies.live.count == 1
            })
            let original = try #require(a.link(to: "b")?.link)
            // a dials b once more, as if both had dialled at the same moment.
            let extra = try await Link.connect(
                to: try #require(b.listeningAddresses.first), on: a.loop, configuration: a.handshakeConfiguration(),
                limits: a.limits, options: a.linkOptions)
            try #require(await ClusterInProcessTests.eventually("b to take its end of the second link", on: [a, b]) { b.state.links(of: "a").count == 2 })
            a.adopt(extra)
            // One of the two links goes; the test closes the other way round too.
            if closeFirst { original.close(reason: "test: the first link is cut") }
            try #require(await ClusterInProcessTests.eventually("one link between a and b", on: [a, b]) {
                a.state.links(of: "b").count == 1 && b.state.links(of: "a").count == 1 && a.connectedPeers == ["b"] && b.connectedPeers == ["a"]
            })
            #expect(await ClusterInProcessTests.eventually("a to hold b's counter and b a's clock (closed first: \(closeFirst))", on: [a, b], timeout: .seconds(5)) {
                a.state.proxies.live.count == 1 && b.state.proxies.live.count == 1
            })
            await b.stop()
            await a.stop()
        }
    }

    /// A node named `name` listening in `folder`, dialling `peer` in the same folder.
    static func node(_ name: String, plugin: String, dialling peer: String, folder: TestFolder) throws -> Node {
        var configuration = NodeConfiguration(
            name: name, listen: [.unix(path: folder.path("\(name).sock"))], peers: [.unix(path: folder.path("\(peer).sock"))],
            heartbeatInterval: .milliseconds(100), heartbeatTimeout: .seconds(2), withdrawTimeout: .seconds(2))
        configuration.reconnectBackoff = (.milliseconds(1), .milliseconds(20))
        return try Node(
            configuration: configuration, catalog: BuiltinCatalog.plugins(node: name),
            remoteServices: BuiltinCatalog.remoteServices, store: InMemoryEntryStore(EntryTree(entries: [Entry(id: plugin, plugin: plugin)])))
    }

    @Test("Two nodes that dial each other from the start, twenty times: each ends with the other's proxy")
    func simultaneousDials() async throws {
        var lost: [Int] = []
        for round in 0..<20 {
            let folder = try TestFolder()
            defer { folder.remove() }
            let a = try Self.node("a", plugin: "clock", dialling: "b", folder: folder)
            let b = try Self.node("b", plugin: "counter", dialling: "a", folder: folder)
            async let startA: Void = a.start()
            async let startB: Void = b.start()
            _ = try await (startA, startB)
            let both = await ClusterInProcessTests.eventually("round \(round): a and b hold each other's proxies", on: [a, b], timeout: .seconds(5)) {
                a.state.proxies.live.count == 1 && b.state.proxies.live.count == 1
            }
            if !both { lost.append(round) }
            await b.stop()
            await a.stop()
        }
        #expect(lost.isEmpty, "rounds where a service was never announced on the kept link: \(lost)")
    }
}
