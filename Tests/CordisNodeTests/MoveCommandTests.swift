import Cordis
import CordisNode
import CordisProcessTesting
import Foundation
import Testing

/// `cordis-console move NODE:ENTRY [--parent ENTRY]` against real nodes: relayed to the node that holds
/// the entry, saved in its entries file, logged and published as a change; a move that cannot be made
/// fails saying why and leaves the file byte for byte as it was.
@Suite("The move command")
struct MoveCommandTests {
    static var consoleExecutable: URL { NodeProcess.productsDirectory.appendingPathComponent("cordis-console") }

    static let entries = #"""
        [{"id": "clock", "plugin": "clock"}, {"id": "greeter", "plugin": "greeter"},
         {"id": "grp", "plugin": "group", "children": [{"id": "sub", "plugin": "group", "children": [{"id": "inner", "plugin": "counter"}]}]}]
        """#

    /// Runs `cordis-console --node ADDRESS WORDS…` and returns its exit code and output.
    static func console(_ words: [String], at member: ClusterMember, in cluster: TestCluster) async throws -> (Int32?, String) {
        let process = try NodeProcess(
            name: "console", arguments: ["--node", member.address] + words, directory: cluster.folder.url,
            executable: consoleExecutable)
        let code = await process.exitCode(timeout: .seconds(20))
        return (code, process.text)
    }

    /// The ids of the file's top level, and of each group's children, as `id[child,child]`.
    static func outline(_ entries: [Entry]) -> String {
        entries.map { entry in entry.children.map { "\(entry.id)[\(outline($0))]" } ?? entry.id }.joined(separator: ",")
    }

    @Test("A move relayed to b puts the entry under a group, in the file too, logs and publishes it; a move back without --parent puts it at the top level")
    func moveUnderAGroupAndBack() async throws {
        try await TestCluster.run { cluster in
            let b = try await cluster.start("b", entries: Self.entries)
            let a = try await cluster.start("a", entries: "[]", peers: [b])
            let bConsole = try await cluster.control(b)
            try #require(try await bConsole.awaitFiber(ofEntry: "greeter", inState: "active") != nil)
            try #require(await a.waitForLine(containing: "linked to b"))
            let fiberBefore = try await bConsole.fiber(ofEntry: "greeter")?["fiber"]

            let (code, output) = try await Self.console(["move", "b:greeter", "--parent", "grp"], at: a, in: cluster)
            #expect(code == 0, "\(output)")
            #expect(output.contains("b:greeter") && output.contains("active"), "\(output)")
            let moved: EntryTree = try FileEntryStore(url: URL(fileURLWithPath: b.entriesFile)).load()
            #expect(Self.outline(moved.entries) == "clock,grp[sub[inner],greeter]")
            let status = try await bConsole.request(.status)
            let greeter = status["nodes"]?.arrayValue?.first?["entries"]?.arrayValue?.first { $0["id"]?.stringValue == "greeter" }
            #expect(greeter?["parent"]?.stringValue == "grp", "\(String(describing: greeter))")
            // Same realms, still enabled: the fiber keeps running untouched.
            #expect(try await bConsole.fiber(ofEntry: "greeter")?["fiber"] == fiberBefore)
            #expect(await b.waitForLine(containing: ": move entry greeter into group grp"))
            let events = try await bConsole.request(.subscribe, args: ["history": true, "follow": false, "cluster": false])
            let changes = (events["events"]?.arrayValue ?? []).filter { $0["kind"]?.stringValue == "change" }
            #expect(changes.contains { $0["detail"]?["change"]?.stringValue == "move entry greeter into group grp"
                && $0["detail"]?["outcome"]?.stringValue == "applied" }, "\(changes)")

            let (backCode, backOutput) = try await Self.console(["move", "b:greeter"], at: b, in: cluster)
            #expect(backCode == 0, "\(backOutput)")
            #expect(Self.outline(try FileEntryStore(url: URL(fileURLWithPath: b.entriesFile)).load().entries) == "clock,grp[sub[inner]],greeter")
            #expect(await b.waitForLine(containing: ": move entry greeter to the top level"))
        }
    }

    @Test("A move into the entry's own descendant, to a missing parent, to a non-group, or of a missing entry fails saying why and leaves the file byte for byte", arguments: [
        (["move", "b:grp", "--parent", "sub"], "cannot move into its own subtree"),
        (["move", "b:grp", "--parent", "grp"], "cannot move into its own subtree"),
        (["move", "b:greeter", "--parent", "nowhere"], #"unknown entry "nowhere""#),
        (["move", "b:greeter", "--parent", "clock"], #"entry "clock" is not a group"#),
        (["move", "b:ghost"], #"unknown entry "ghost""#),
    ])
    func impossibleMoves(_ words: [String], _ reason: String) async throws {
        try await TestCluster.run { cluster in
            let b = try await cluster.start("b", entries: Self.entries)
            let bConsole = try await cluster.control(b)
            try #require(try await bConsole.awaitFiber(ofEntry: "inner", inState: "active") != nil)
            let before = try #require(FileManager.default.contents(atPath: b.entriesFile))
            let fibersBefore = try await bConsole.nodeStatus()["fibers"]
            let (code, output) = try await Self.console(words, at: b, in: cluster)
            #expect(code == 1, "\(words): \(output)")
            #expect(output.contains("error:") && output.contains(reason), "\(words): \(output)")
            #expect(FileManager.default.contents(atPath: b.entriesFile) == before, "\(words) changed the file")
            #expect(try await bConsole.nodeStatus()["fibers"] == fibersBefore)
        }
    }

    @Test("A move needs the operator role: a viewer's is refused saying so and changes nothing; an operator's goes through")
    func moveNeedsTheOperatorRole() async throws {
        try await TestCluster.run { cluster in
            let uid = "uid:\(getuid())"
            try cluster.folder.write("viewer.json", "{\"\(uid)\": \"viewer\"}")
            try cluster.folder.write("operator.json", "{\"\(uid)\": \"operator\"}")
            let viewed = try await cluster.start("v", entries: Self.entries, extra: ["--operators", cluster.folder.path("viewer.json")])
            let before = try #require(FileManager.default.contents(atPath: viewed.entriesFile))
            let (code, output) = try await Self.console(["move", "v:greeter", "--parent", "grp"], at: viewed, in: cluster)
            #expect(code == 1, "\(output)")
            #expect(output.contains("error: move needs the operator role; you are viewer"), "\(output)")
            #expect(FileManager.default.contents(atPath: viewed.entriesFile) == before)
            #expect(await viewed.waitForLine(containing: "refused: "))
            let operated = try await cluster.start("o", entries: Self.entries, extra: ["--operators", cluster.folder.path("operator.json")])
            let (applied, appliedOutput) = try await Self.console(["move", "o:greeter", "--parent", "grp"], at: operated, in: cluster)
            #expect(applied == 0, "\(appliedOutput)")
        }
    }
}
