import CordisNode
import Foundation
import Testing

/// Real `cordis-node` processes on Unix sockets: a consumer on one node injects a provider on another,
/// fails over between remote providers, moves to a local one, and respects shared realms.
@Suite("Cluster: remote inject")
struct ClusterRemoteInjectTests {
    @Test("A greeter on one node injects the clock of another and says where it came from")
    func greeterInjectsARemoteClock() async throws {
        try await TestCluster.run { cluster in
            let b = try await cluster.start("b", entries: #"[{"id": "clock", "plugin": "clock"}]"#)
            let a = try await cluster.start("a", entries: #"[{"id": "greeter", "plugin": "greeter"}]"#, peers: [b])
            try #require(await a.waitForLine(containing: "hello at"))
            #expect(a.process.text.lines(containing: "hello at").first?.contains(" from b ") == true)
            let console = try await cluster.control(a)
            let greeter = try await console.awaitFiber(ofEntry: "greeter", inState: "active")
            let clock = greeter?["injects"]?.objectValue?["clock"]?.objectValue
            #expect(clock?["node"]?.stringValue == "b")
            #expect(clock?["realm"]?.isNull == true)
        }
    }

    @Test("Consumers fail over between remote providers and move to a local one with one reload")
    func failoverAndMoveToALocalProvider() async throws {
        try await TestCluster.run { cluster in
            // c starts after a's greeter chose b: the first choice goes to the first remote provider a
            // hears of (consumers then stay with it), so starting b and c together would race.
            let b = try await cluster.start("b", entries: #"[{"id": "clock", "plugin": "clock"}]"#)
            let a = try await cluster.start(
                "a", entries: #"[{"id": "greeter", "plugin": "greeter"}, {"id": "clock", "plugin": "clock", "disabled": true}]"#,
                peers: [b])
            try #require(await a.waitForLine(containing: "from b"))
            _ = try await cluster.start("c", entries: #"[{"id": "clock", "plugin": "clock"}]"#, peers: [b])
            let console = try await cluster.control(a)
            // a learns c from b and links to it: both proxies exist, the greeter stays with b.
            try #require(await console.awaitStatus("two remote clocks") { status in
                status.fibers(plugin: "remote:clock").count == 2
                    && status.fiber(entry: "greeter")?.provider("clock") == "b"
                    && status.fiber(entry: "greeter")?["state"]?.stringValue == "active"
            })

            // b's clock goes: the greeter moves to c's.
            let bConsole = try await cluster.control(b)
            _ = try await bConsole.request(.disable, args: ["entry": "clock"])
            try #require(await a.waitForLine(containing: "from c"))
            #expect(try await console.awaitFiber(ofEntry: "greeter", inState: "active")?.provider("clock") == "c")

            // b's clock comes back: the greeter stays with c (it stays with its provider until it leaves).
            _ = try await bConsole.request(.enable, args: ["entry": "clock"])
            try #require(await console.awaitStatus("b's clock back") { $0.fibers(plugin: "remote:clock").count == 2 })
            #expect(try await console.providerNode(ofEntry: "greeter", service: "clock") == "c")

            // A local clock appears: the greeter moves to it, with one reload.
            let hellos = a.process.text.occurrences(of: "hello at")
            let byes = a.process.text.occurrences(of: "] greeter: bye")
            _ = try await console.request(.enable, args: ["entry": "clock"])
            try #require(await a.waitForLine(containing: "from a "))
            #expect(try await console.awaitFiber(ofEntry: "greeter", inState: "active")?.provider("clock") == "a")
            #expect(a.process.text.occurrences(of: "hello at") == hellos + 1)
            #expect(a.process.text.occurrences(of: "] greeter: bye") == byes + 1)
        }
    }

    @Test("A shared realm spans nodes: a greeter in realm blue uses b's blue clock, one outside stays pending")
    func sharedRealmAcrossNodes() async throws {
        try await TestCluster.run { cluster in
            let b = try await cluster.start("b", entries: """
                [{"id": "blue", "isolate": {"clock": "blue"}, "children": [{"id": "clock-blue", "plugin": "clock"}]}]
                """)
            let a = try await cluster.start("a", entries: """
                [{"id": "blue", "isolate": {"clock": "blue"}, "children": [{"id": "greeter-blue", "plugin": "greeter"}]},
                 {"id": "greeter", "plugin": "greeter"}]
                """, peers: [b])
            try #require(await a.waitForLine(containing: "hello at"))
            let console = try await cluster.control(a)
            let blue = try await console.awaitFiber(ofEntry: "greeter-blue", inState: "active")
            let clock = blue?["injects"]?.objectValue?["clock"]?.objectValue
            #expect(clock?["node"]?.stringValue == "b")
            #expect(clock?["realm"]?.stringValue == "blue")
            let outside = try await console.fiber(ofEntry: "greeter")
            #expect(outside?["state"]?.stringValue == "pending")
            #expect(outside?["missing"]?.arrayValue == ["clock"])
            #expect(a.process.text.occurrences(of: "hello at") == 1)
        }
    }
}
