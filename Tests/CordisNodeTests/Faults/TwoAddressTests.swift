import CordisNode
import CordisProcessTesting
import Foundation
import Testing

/// A node that advertises two addresses (`--advertise` twice), the first reachable only through a
/// relay the test controls: with both reachable its peers keep one link; with the first dead (nothing
/// listening, or a relay that swallows every byte) they reach it through the second in bounded time;
/// a link cut on one address during a withdrawal still lets the withdrawal end, leaves no proxy, and
/// the peer links again on the other address.
@Suite("Faults: a node with two advertised addresses", .faultTurns)
struct TwoAddressTests {
    /// b's addresses: the relay's first, its own socket second.
    static func bArguments(_ folder: TestFolder, entries: String, peers: [String]) throws -> [String] {
        try folder.write("b.json", "{\"version\": 1, \"entries\": \(entries)}")
        return ["--name", "b", "--entries", folder.path("b.json"), "--listen", "unix:\(folder.path("b.sock"))",
                "--advertise", "unix:\(folder.path("rb.sock"))", "--advertise", "unix:\(folder.path("b.sock"))"]
            + ClusterMember.timing + peers.flatMap { ["--peer", $0] }
    }

    /// The connections between `a` and `b`: straight, and through the relay's path `rb.sock`.
    static func links(_ a: ClusterMember, _ b: ClusterMember, folder: TestFolder) -> (direct: Int, relayed: Int) {
        let aPid = a.process.process.processIdentifier
        return (UnixLinks.count(between: aPid, and: b.process.process.processIdentifier) ?? -1,
                UnixLinks.count(from: aPid, toPath: folder.path("rb.sock")) ?? -1)
    }

    /// Waits until `condition` holds for the links between a and b (a bounded number of looks within
    /// `timeout`); the last counts seen.
    static func awaitLinks(
        _ a: ClusterMember, _ b: ClusterMember, folder: TestFolder, timeout: Duration = .seconds(15),
        _ condition: ((direct: Int, relayed: Int)) -> Bool
    ) async -> (direct: Int, relayed: Int) {
        let deadline = ContinuousClock.now + timeout
        var last = links(a, b, folder: folder)
        for _ in 0..<500 where !condition(last) && ContinuousClock.now < deadline {
            await Task.yield()
            last = links(a, b, folder: folder)
        }
        return last
    }

    /// c (a clock) is the seed both a and b dial; a learns b's two addresses from c and dials both.
    @Test("Both addresses reachable: a peer that learns both keeps one link to the node, consumers are active, no proxy is doubled")
    func bothReachable() async throws {
        try await TestCluster.run { cluster in
            let folder = cluster.folder
            let relay = try LoopbackRelay(routes: [(folder.path("rb.sock"), folder.path("b.sock"))])
            defer { relay.stop() }
            let c = try await cluster.start("c", entries: #"[{"id": "clock", "plugin": "clock"}]"#)
            let b = try await cluster.launch("b", arguments: try Self.bArguments(
                folder, entries: #"[{"id": "counter", "plugin": "counter"}, {"id": "greeter", "plugin": "greeter"}]"#, peers: [c.address]))
            let a = try await cluster.start("a", entries: #"[{"id": "badge", "plugin": "badge"}]"#, peers: [c])
            let consoles = [try await cluster.control(a), try await cluster.control(b), try await cluster.control(c)]
            #expect(try await consoles[0].awaitFiber(ofEntry: "badge", inState: "active")?.provider("counter") == "b")
            #expect(try await consoles[1].awaitFiber(ofEntry: "greeter", inState: "active")?.provider("clock") == "c")
            let seen = await Self.awaitLinks(a, b, folder: folder) { $0.direct + $0.relayed == 1 }
            #expect(seen.direct + seen.relayed == 1, "links between a and b: \(seen)")
            #expect(try await ClusterReconciliation.awaitReconciled([a, b, c], consoles: consoles))
            let members = try await consoles[0].request(.members)
            let bMember = members["members"]?.arrayValue?.first { $0["name"]?.stringValue == "b" }
            #expect(bMember?["addresses"]?.arrayValue?.count == 2, "a's view of b: \(String(describing: bMember))")
            print("two addresses, both reachable: a-b links \(seen)")
        }
    }

    @Test("The first address dead (nothing listening, then a relay that swallows every byte): peers reach the node through the second in bounded time", arguments: ["nothing listening", "relay cut"])
    func firstAddressDead(_ how: String) async throws {
        try await TestCluster.run { cluster in
            let folder = cluster.folder
            let relay: LoopbackRelay? = how == "relay cut" ? try LoopbackRelay(routes: [(folder.path("rb.sock"), folder.path("b.sock"))]) : nil
            relay?.cut()
            defer { relay?.stop() }
            let c = try await cluster.start("c", entries: #"[{"id": "clock", "plugin": "clock"}]"#)
            let b = try await cluster.launch("b", arguments: try Self.bArguments(
                folder, entries: #"[{"id": "counter", "plugin": "counter"}]"#, peers: [c.address]))
            let started = ContinuousClock.now
            let a = try await cluster.start("a", entries: #"[{"id": "badge", "plugin": "badge"}]"#, peers: [c])
            let aConsole = try await cluster.control(a)
            #expect(try await aConsole.awaitFiber(ofEntry: "badge", inState: "active", timeout: .seconds(15))?.provider("counter") == "b")
            let took = ContinuousClock.now - started
            #expect(took < .seconds(15), "a reached b after \(took)")
            let seen = await Self.awaitLinks(a, b, folder: folder) { $0.direct == 1 }
            #expect(seen.direct == 1, "links between a and b: \(seen)")
            let consoles = [aConsole, try await cluster.control(b), try await cluster.control(c)]
            #expect(try await ClusterReconciliation.awaitReconciled([a, b, c], consoles: consoles))
            print("two addresses, first dead (\(how)): a active on b's counter after \(took); links \(seen)")
        }
    }

    @Test("The link on the relayed address is cut during a withdrawal: the withdrawal ends, no proxy stays, the peer links again on the second address")
    func cutDuringWithdrawal() async throws {
        try await TestCluster.run { cluster in
            let folder = cluster.folder
            // a advertises only a relayed address too: once the relay is cut b cannot dial a, so the link
            // can only come back by a dialling b's second address.
            let relay = try LoopbackRelay(routes: [
                (folder.path("rb.sock"), folder.path("b.sock")), (folder.path("ra.sock"), folder.path("a.sock")),
            ])
            defer { relay.stop() }
            let b = try await cluster.launch("b", arguments: try Self.bArguments(
                folder, entries: #"[{"id": "clock", "plugin": "clock"}]"#, peers: []))
            // a knows b only by the relayed address at first.
            let a = try await cluster.start(
                "a", entries: #"[{"id": "greeter", "plugin": "greeter"}]"#,
                extra: ["--advertise", "unix:\(folder.path("ra.sock"))", "--peer", "unix:\(folder.path("rb.sock"))"])
            let aConsole = try await cluster.control(a)
            let bConsole = try await cluster.control(b)
            try #require(try await aConsole.awaitFiber(ofEntry: "greeter", inState: "active")?.provider("clock") == "b")
            let before = await Self.awaitLinks(a, b, folder: folder) { $0.direct + $0.relayed == 1 }
            try #require(before.relayed == 1 && before.direct == 0, "the link a-b does not go through the relay: \(before)")

            relay.cut(after: #""type":"withdraw""#)
            let started = ContinuousClock.now
            let disabled = try await bConsole.request(.disable, args: ["entry": "clock"], timeout: .seconds(20))
            let took = ContinuousClock.now - started
            #expect(disabled.objectValue?["disabled"]?.boolValue == true)
            #expect(took < .seconds(8), "the withdrawal took \(took)")
            #expect(await b.process.waitFor("the end of the withdrawal of clock") {
                $0.contains("withdrawal of clock finished") || $0.contains("withdrawal of clock went ahead")
            })
            #expect(try await aConsole.awaitStatus("no proxy of b's clock") { $0.fibers(plugin: "remote:clock").isEmpty })
            #expect(try await aConsole.awaitFiber(ofEntry: "greeter", inState: "pending") != nil)

            // The relay stays cut: a links to b again through b's second address.
            let relinked = ContinuousClock.now
            try #require(await a.waitForLine(containing: "link to b lost"))
            try #require(await a.waitForOccurrences(of: "linked to b", count: 2, timeout: .seconds(20)))
            let relinkTook = ContinuousClock.now - relinked
            let after = await Self.awaitLinks(a, b, folder: folder) { $0.direct == 1 }
            #expect(after.direct == 1, "links between a and b after the cut: \(after)")
            #expect(try await aConsole.nodeStatus().fibers(plugin: "remote:clock").isEmpty)
            _ = try await bConsole.request(.enable, args: ["entry": "clock"])
            #expect(try await aConsole.awaitFiber(ofEntry: "greeter", inState: "active")?.provider("clock") == "b")
            #expect(try await aConsole.nodeStatus().fibers(plugin: "remote:clock").count == 1)
            print("two addresses, cut during a withdrawal: disable took \(took), relinked on the second address in \(relinkTook); links \(after)")
        }
    }
}
