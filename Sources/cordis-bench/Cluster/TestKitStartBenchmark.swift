import CordisControl
import CordisTestKit
import CordisWire
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// `testkit`: the time from nothing to a 3-node cluster (a clock on n0, a greeter on n1 and on n2, each
/// consumer using n0's clock) with every fiber active, started by `CordisTestKit`'s `NodeCluster`
/// (relays, the status read again at each change the node reports) against the harness it replaces in the project's suites
/// (`NodeProcess` started one after another, each waiting for `listening on`, peers dialled directly,
/// then each node's status read back to back until its fibers are active, as `ClusterMember` and
/// `awaitFiber` do). The two alternate, round by round; p50 and p90 of each, and the ratio of the p50s.
enum TestKitStartBenchmark {
    static let entries = [
        #"[{"id": "clock", "plugin": "clock"}]"#, #"[{"id": "greeter", "plugin": "greeter"}]"#,
        #"[{"id": "greeter", "plugin": "greeter"}]"#,
    ]

    static func run(rounds: Int) async throws -> (rows: [[String: Double]], ratios: [String: Double]) {
        var kit: [Double] = []
        var harness: [Double] = []
        for _ in 0..<rounds {
            harness.append(try await harnessRound())
            kit.append(try await kitRound())
        }
        func percentile(_ values: [Double], _ p: Double) -> Double {
            let sorted = values.sorted()
            return sorted[min(sorted.count - 1, Int((Double(sorted.count - 1) * p).rounded()))]
        }
        let rows: [[String: Double]] = [
            ["kit": 1, "p50_ms": percentile(kit, 0.5), "p90_ms": percentile(kit, 0.9), "rounds": Double(rounds)],
            ["kit": 0, "p50_ms": percentile(harness, 0.5), "p90_ms": percentile(harness, 0.9), "rounds": Double(rounds)],
        ]
        return (rows, ["3 nodes all active p50 kit / harness": percentile(kit, 0.5) / percentile(harness, 0.5)])
    }

    /// One cluster by `NodeCluster`, in milliseconds.
    static func kitRound() async throws -> Double {
        let start = ContinuousClock.now
        let executable = NodeExecutable(url: NodeProcess.productsDirectory.appendingPathComponent("cordis-node"))
        let specs = entries.enumerated().map { NodeSpec("n\($0.offset)", json: $0.element) }
        return try await NodeCluster.run(specs, options: ClusterOptions(executable: executable)) { cluster in
            try await cluster.awaitAll(.active)
            return (ContinuousClock.now - start).milliseconds
        }
    }

    /// One cluster the suites' older way, in milliseconds.
    static func harnessRound() async throws -> Double {
        let start = ContinuousClock.now
        let folder = try TestFolder()
        defer { folder.remove() }
        var processes: [NodeProcess] = []
        var consoles: [ControlClient] = []
        do {
            for (index, text) in entries.enumerated() {
                try folder.write("n\(index).json", text)
                var arguments = [
                    "--name", "n\(index)", "--entries", folder.path("n\(index).json"), "--listen", "unix:\(folder.path("n\(index).sock"))",
                    "--heartbeat-interval", "0.2", "--heartbeat-timeout", "3",
                ]
                for peer in 0..<index { arguments += ["--peer", "unix:\(folder.path("n\(peer).sock"))"] }
                let process = try NodeProcess(name: "n\(index)", arguments: arguments, directory: folder.url)
                processes.append(process)
                guard await process.waitUntil("listening on", timeout: .seconds(60), { $0.contains("listening on") }) else {
                    throw BenchmarkError("n\(index) did not start: \(process.text)")
                }
            }
            for index in entries.indices {
                let console = try await ControlClient.connect(to: try Address(parsing: "unix:\(folder.path("n\(index).sock"))"))
                consoles.append(console)
                let deadline = ContinuousClock.now + .seconds(60)
                while true {
                    let status = try await console.request(.status)
                    let fibers = status["nodes"]?.arrayValue?.first?["fibers"]?.arrayValue ?? []
                    let own = fibers.filter { $0["entry"]?.stringValue != nil }
                    if !own.isEmpty, own.allSatisfy({ $0["state"]?.stringValue == "active" }) { break }
                    guard ContinuousClock.now < deadline else { throw BenchmarkError("n\(index) not active within 60 s") }
                }
            }
        } catch {
            for console in consoles { await console.close() }
            for process in processes { await process.stop() }
            throw error
        }
        let took = (ContinuousClock.now - start).milliseconds
        for console in consoles { await console.close() }
        for process in processes { await process.stop() }
        return took
    }
}
