import Cordis
import CordisNode
import Foundation
import Testing

/// What a cluster's entries files imply every node's status shows, for the built-in plugins: one fiber
/// per enabled entry on its node, active when what it injects is provided somewhere in the cluster and
/// pending otherwise, and on each node exactly one proxy (`remote:SERVICE`) per other node that provides
/// a service. Only top-level entries (no groups).
struct ClusterReconciliation {
    static let provides = ["clock": "clock", "counter": "counter"]
    static let injects = ["greeter": "clock", "badge": "counter"]

    struct Expected: Equatable, CustomStringConvertible {
        /// entry id -> state, for every enabled entry.
        var states: [String: String]
        /// service -> number of proxies.
        var proxies: [String: Int]
        var description: String { "states \(states.sorted { $0.key < $1.key }), proxies \(proxies.sorted { $0.key < $1.key })" }
    }

    /// The enabled entries (id, plugin) of each node's entries file.
    static func enabledEntries(of members: [ClusterMember]) throws -> [String: [(id: String, plugin: String)]] {
        var result: [String: [(id: String, plugin: String)]] = [:]
        for member in members {
            let entries: [Entry] = try FileEntryStore(url: URL(fileURLWithPath: member.entriesFile)).load()
            result[member.name] = entries.filter { !$0.disabled && !$0.isGroup }.map { (id: $0.id, plugin: $0.plugin) }
        }
        return result
    }

    /// What `node`'s status should show, given every node's enabled entries.
    static func expected(for node: String, entries: [String: [(id: String, plugin: String)]]) -> Expected {
        let providedAnywhere = Set(entries.values.flatMap { $0.compactMap { provides[$0.plugin] } })
        var states: [String: String] = [:]
        for entry in entries[node] ?? [] {
            if let needed = injects[entry.plugin] {
                states[entry.id] = providedAnywhere.contains(needed) ? "active" : "pending"
            } else {
                states[entry.id] = "active"
            }
        }
        var proxies: [String: Int] = [:]
        for (other, list) in entries where other != node {
            for service in Set(list.compactMap { provides[$0.plugin] }) { proxies[service, default: 0] += 1 }
        }
        return Expected(states: states, proxies: proxies)
    }

    /// What a node's status shows, in the same terms.
    static func observed(_ status: JSONObject) -> Expected {
        var states: [String: String] = [:]
        var proxies: [String: Int] = [:]
        for fiber in (status["fibers"]?.arrayValue ?? []).compactMap(\.objectValue) {
            let plugin = fiber["plugin"]?.stringValue ?? ""
            if plugin.hasPrefix("remote:") {
                proxies[String(plugin.dropFirst("remote:".count)), default: 0] += 1
            } else if let entry = fiber["entry"]?.stringValue {
                // Two fibers for one entry show as a state list that cannot match.
                states[entry] = states[entry] == nil ? fiber["state"]?.stringValue ?? "?" : "duplicate"
            }
        }
        return Expected(states: states, proxies: proxies)
    }

    /// Waits until every member's status matches what the entries files imply (each request awaiting
    /// the previous answer, at most `timeout` per member); records an issue naming the member when not.
    static func awaitReconciled(
        _ members: [ClusterMember], consoles: [ControlClient], timeout: Duration = .seconds(20)
    ) async throws -> Bool {
        let entries = try enabledEntries(of: members)
        var all = true
        for (member, console) in zip(members, consoles) {
            let want = expected(for: member.name, entries: entries)
            let reached = try await console.awaitStatus("\(member.name): \(want)", timeout: timeout) { observed($0) == want }
            all = all && reached
        }
        return all
    }
}
