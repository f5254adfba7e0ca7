import CordisNode
import CordisProcessTesting
import Foundation
import Testing

/// Real `cordis-node`s that each name the others as `--peer` and start at the same moment, so every
/// pair dials both ways at once: each round ends with exactly one connection per pair (as the kernel
/// shows it), every consumer active on the other side's provider, no duplicate or stale proxy, and a
/// withdrawal that completes, and no node logs a lost link on the way (not even for a link it took
/// first that the other side then closed as the duplicate). The in-process counterparts are
/// `DuplicateLinkAnnouncementTests` and `ClusterDuplicateCloseTests`.
@Suite("Faults: real nodes dialling each other at the same moment", .faultTurns)
struct SimultaneousDialTests {
    /// What each node runs: every node provides one service and consumes the others'.
    static let entries = [
        "a": #"[{"id": "clock", "plugin": "clock"}, {"id": "badge", "plugin": "badge"}]"#,
        "b": #"[{"id": "counter", "plugin": "counter"}, {"id": "greeter", "plugin": "greeter"}]"#,
        "c": #"[{"id": "c-clock", "plugin": "clock"}, {"id": "c-greeter", "plugin": "greeter"}, {"id": "c-badge", "plugin": "badge"}]"#,
    ]

    /// Starts `names` at once, each with every other as `--peer`, and waits for all to listen.
    static func launchTogether(_ names: [String], in cluster: TestCluster) async throws -> [ClusterMember] {
        let folder = cluster.folder
        for name in names {
            try folder.write("\(name).json", "{\"version\": 1, \"entries\": \(entries[name] ?? "[]")}")
        }
        let arguments = names.map { name in
            ["--name", name, "--entries", folder.path("\(name).json"), "--listen", "unix:\(folder.path("\(name).sock"))"]
                + ClusterMember.timing + names.filter { $0 != name }.flatMap { ["--peer", "unix:\(folder.path("\($0).sock"))"] }
        }
        return try await withThrowingTaskGroup(of: (Int, ClusterMember).self) { group in
            for (index, name) in names.enumerated() {
                group.addTask { (index, try await cluster.launch(name, arguments: arguments[index])) }
            }
            var members: [(Int, ClusterMember)] = []
            for try await member in group { members.append(member) }
            return members.sorted { $0.0 < $1.0 }.map(\.1)
        }
    }

    /// Waits until exactly one connection joins each pair of `members` (at most `timeout`, a bounded
    /// number of looks); returns the counts last seen for the pairs that never got there.
    static func awaitOneLinkPerPair(_ members: [ClusterMember], timeout: Duration = .seconds(10)) async -> [String: Int] {
        let deadline = ContinuousClock.now + timeout
        var wrong: [String: Int] = [:]
        for _ in 0..<500 {
            wrong = [:]
            for (index, first) in members.enumerated() {
                for second in members[(index + 1)...] {
                    let count = UnixLinks.count(
                        between: first.process.process.processIdentifier, and: second.process.process.processIdentifier) ?? -1
                    if count != 1 { wrong["\(first.name)-\(second.name)"] = count }
                }
            }
            if wrong.isEmpty || ContinuousClock.now >= deadline { break }
            await Task.yield()
        }
        return wrong
    }

    /// One round: `names` launched together; one link per pair, announcements on it, no duplicate or
    /// stale proxy, then b's counter withdrawn everywhere. Returns the problems seen (none when it
    /// passed) and how many links were lost on the way ("link to X lost" in a node's output: none may
    /// be, not even the link a node took first and the other side then closed as the duplicate before
    /// the second one was up; that one is replaced without a withdrawal).
    static func round(_ round: Int, _ names: [String]) async throws -> (problems: [String], lost: Int) {
        var problems: [String] = []
        var lostLinks = 0
        try await TestCluster.run { cluster in
            let members = try await launchTogether(names, in: cluster)
            var consoles: [ControlClient] = []
            for member in members { consoles.append(try await cluster.control(member)) }
            let byName = Dictionary(uniqueKeysWithValues: zip(names, zip(members, consoles)).map { ($0.0, $0.1) })
            // Consumers active on a provider of another node.
            let (aConsole, bConsole) = (try #require(byName["a"]?.1), try #require(byName["b"]?.1))
            if try await aConsole.awaitFiber(ofEntry: "badge", inState: "active")?.provider("counter") != "b" {
                problems.append("a's badge is not active on b's counter")
            }
            let greeterProvider = try await bConsole.awaitFiber(ofEntry: "greeter", inState: "active")?.provider("clock")
            if greeterProvider == nil || greeterProvider == "b" { problems.append("b's greeter is not active on a remote clock") }
            if let cConsole = byName["c"]?.1 {
                if try await cConsole.awaitFiber(ofEntry: "c-badge", inState: "active")?.provider("counter") != "b" {
                    problems.append("c's badge is not active on b's counter")
                }
            }
            let wrong = await awaitOneLinkPerPair(members)
            if !wrong.isEmpty { problems.append("connections per pair: \(wrong.sorted { $0.key < $1.key })") }
            if !(try await ClusterReconciliation.awaitReconciled(members, consoles: consoles, timeout: .seconds(10))) {
                problems.append("a status shows duplicate or stale proxies")
            }
            for member in members {
                for other in names where other != member.name {
                    let linked = member.process.text.occurrences(of: "linked to \(other)")
                    lostLinks += member.process.text.occurrences(of: "link to \(other) lost")
                    if linked == 0 { problems.append("\(member.name) never linked to \(other)") }
                }
            }
            // A withdrawal across the kept links completes.
            let b = try #require(byName["b"]?.0)
            let started = ContinuousClock.now
            _ = try await bConsole.request(.disable, args: ["entry": "counter"], timeout: .seconds(20))
            let took = ContinuousClock.now - started
            if !(await b.waitForLine(containing: "withdrawal of counter finished", timeout: .seconds(10))) {
                problems.append("the withdrawal of b's counter did not finish with acknowledgements (took \(took))")
            }
            if !(try await ClusterReconciliation.awaitReconciled(members, consoles: consoles, timeout: .seconds(10))) {
                problems.append("a proxy of b's counter stayed after its withdrawal")
            }
            print("simultaneous dials \(names.joined()): round \(round) settled, withdrawal took \(took), links lost on the way: \(lostLinks)")
        }
        return (problems.map { "round \(round): \($0)" }, lostLinks)
    }

    /// Runs `rounds` rounds of `names` started together; expects no problem and no link lost in any.
    static func rounds(_ rounds: Int, of names: [String], _ what: String) async throws {
        let started = ContinuousClock.now
        var problems: [String] = []
        var lost = 0
        for index in 0..<rounds {
            let outcome = try await round(index, names)
            problems += outcome.problems
            lost += outcome.lost
        }
        print("simultaneous dials of \(what): \(rounds) rounds in \(ContinuousClock.now - started); links lost and relinked on the way: \(lost)")
        #expect(problems.isEmpty, "\(problems)")
        #expect(lost == 0, "a link was lost while the nodes dialled each other (consumers went pending and came back)")
    }

    @Test("Two nodes started together, each the other's peer, fifty rounds: one link, announcements on it, no link lost, a withdrawal completes")
    func twoNodes() async throws {
        try await Self.rounds(50, of: ["a", "b"], "two nodes")
    }

    @Test("Three nodes started together, each the others' peer, twenty rounds: one link per pair, announcements, no link lost, a withdrawal completes")
    func threeNodes() async throws {
        try await Self.rounds(20, of: ["a", "b", "c"], "three nodes")
    }
}
