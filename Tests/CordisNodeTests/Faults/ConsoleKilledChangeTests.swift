import Cordis
import CordisNode
import CordisProcessTesting
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `cordis-console` killed (SIGKILL) at random moments of each changing command — enable, disable,
/// config, remove, move: every change is applied whole or not at all (the entries file parses and is
/// the old or the new tree, the fibers follow the file), and the node keeps serving.
@Suite("Faults: a console killed in the middle of a change", .faultTurns)
struct ConsoleKilledChangeTests {
    static let entries = #"""
        [{"id": "clock", "plugin": "clock"}, {"id": "counter", "plugin": "counter", "config": {"start": 0}},
         {"id": "greeter", "plugin": "greeter"}, {"id": "mover", "plugin": "badge"},
         {"id": "grp", "plugin": "group", "children": [{"id": "inner", "plugin": "greeter"}]}]
        """#

    /// A tree as one line: every entry with its plugin, disabled flag, config and children, in order.
    static func describe(_ entries: [Entry]) -> String {
        entries.map { entry in
            var text = "\(entry.id):\(entry.plugin)\(entry.disabled ? ":off" : "")"
            if let config = entry.config { text += ":\(config.jsonString())" }
            if let children = entry.children { text += "[\(describe(children))]" }
            return text
        }.joined(separator: ",")
    }

    static func describeFile(_ path: String) throws -> String {
        describe(try FileEntryStore(url: URL(fileURLWithPath: path)).load().entries)
    }

    /// The entries of the file that run: enabled, in no disabled group; groups left out.
    static func running(_ entries: [Entry], enabled: Bool = true) -> Set<String> {
        var ids = Set<String>()
        for entry in entries {
            let on = enabled && !entry.disabled
            if let children = entry.children {
                ids.formUnion(running(children, enabled: on))
            } else if on {
                ids.insert(entry.id)
            }
        }
        return ids
    }

    /// The entries whose fibers the status shows (proxies and groups left out).
    static func fibered(_ status: JSONObject) -> Set<String> {
        Set((status["fibers"]?.arrayValue ?? []).compactMap(\.objectValue).filter {
            let plugin = $0["plugin"]?.stringValue ?? ""
            return !plugin.hasPrefix("remote:") && plugin != "group"
        }.compactMap { $0["entry"]?.stringValue })
    }

    /// The console command of round `round` of `kind`, and what the observer does first so it changes
    /// something: (preparation, console words).
    static func plan(_ kind: String, round: Int, file: [Entry]) -> (prepare: (ControlCommand, JSONObject)?, words: [String]) {
        let counterDisabled = file.first { $0.id == "counter" }?.disabled ?? false
        let moverInGroup = !(file.contains { $0.id == "mover" })
        switch kind {
        case "enable":
            return (counterDisabled ? nil : (.disable, ["entry": "counter"]), ["enable", "a:counter"])
        case "disable":
            return (counterDisabled ? (.enable, ["entry": "counter"]) : nil, ["disable", "a:counter"])
        case "config":
            return (nil, ["config", "a:counter", #"{"start": \#(round + 1)}"#])
        case "remove":
            return ((.add, ["entry": ["id": .string("victim-\(round)"), "plugin": "greeter"]]), ["remove", "a:victim-\(round)"])
        default:
            return (nil, moverInGroup ? ["move", "a:mover"] : ["move", "a:mover", "--parent", "grp"])
        }
    }

    @Test("cordis-console killed at random moments of each changing command: applied whole or not at all, fibers follow the file, the node serves", arguments: ["enable", "disable", "config", "remove", "move"])
    func consoleKilledMidChange(_ kind: String) async throws {
        try await TestCluster.run { cluster in
            let a = try await cluster.start("a", entries: Self.entries)
            let observer = try await cluster.control(a)
            try #require(try await observer.awaitFiber(ofEntry: "inner", inState: "active") != nil)
            var generator = SystemRandomNumberGenerator()
            let rounds = 12
            var applied = 0
            let started = ContinuousClock.now
            for round in 0..<rounds {
                let current = try FileEntryStore(url: URL(fileURLWithPath: a.entriesFile)).load().entries
                let (prepare, words) = Self.plan(kind, round: round, file: current)
                if let (command, args) = prepare { _ = try await observer.request(command, args: args) }
                let oldEntries = try FileEntryStore(url: URL(fileURLWithPath: a.entriesFile)).load().entries
                let old = Self.describe(oldEntries)
                let new = Self.describe(Self.applying(words, to: oldEntries))
                try #require(new != old, "round \(round): \(words) would change nothing")
                let console = try NodeProcess(
                    name: "console-\(round)", arguments: ["--node", a.address] + words,
                    directory: cluster.folder.url, executable: ConsoleFaultTests.consoleExecutable)
                for _ in 0..<Int.random(in: 0...200_000, using: &generator) { await Task.yield() }
                console.signal(SIGKILL)
                _ = await console.exitCode()
                // Until the file and the fibers agree (a change read before the kill may still be running).
                var seen = old
                let settled = try await observer.awaitStatus("round \(round) of \(kind): fibers that follow the file") { status in
                    guard let tree = try? FileEntryStore(url: URL(fileURLWithPath: a.entriesFile)).load() as EntryTree else { return false }
                    seen = Self.describe(tree.entries)
                    return Self.fibered(status) == Self.running(tree.entries)
                }
                #expect(settled)
                #expect(seen == old || seen == new, "round \(round): \(words): the file is \(seen), neither the old \(old) nor the new \(new)")
                if seen == new { applied += 1 }
            }
            print("console killed mid-\(kind): \(rounds) kills, \(applied) applied whole, \(rounds - applied) not at all, in \(ContinuousClock.now - started)")
            // The node still serves.
            let late = try await cluster.control(a)
            _ = try await late.request(.call, args: ["service": "clock", "method": "now"])
            #expect(a.process.process.isRunning)
        }
    }

    /// `entries` with the change `words` made, whole.
    static func applying(_ words: [String], to entries: [Entry]) -> [Entry] {
        var result = entries
        let id = String(words[1].dropFirst(2))
        switch words[0] {
        case "enable", "disable":
            for index in result.indices where result[index].id == id { result[index].disabled = words[0] == "disable" }
        case "config":
            let start = Int(words[2].filter(\.isNumber)) ?? -1
            for index in result.indices where result[index].id == id { result[index].config = .object(["start": .integer(start)]) }
        case "remove":
            result.removeAll { $0.id == id }
        default:
            var moving: Entry?
            if let index = result.firstIndex(where: { $0.id == id }) { moving = result.remove(at: index) }
            for index in result.indices where result[index].isGroup {
                if let child = result[index].children?.firstIndex(where: { $0.id == id }) { moving = result[index].children?.remove(at: child) }
            }
            guard let moving else { return entries }
            if words.count == 4, let group = result.firstIndex(where: { $0.id == words[3] }) {
                result[group].children?.append(moving)
            } else {
                result.append(moving)
            }
        }
        return result
    }
}
