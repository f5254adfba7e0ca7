import CordisJSON
import CordisNode
import CordisWire
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// `cluster_start_ms` and `status_8x1000_ms`: `nodes` real `cordis-node` processes, each with `fibers`
/// built-in `counter` entries, started together and peered to the first one. Measures the time from
/// spawning them until the first node sees every member reachable, then the time of one
/// `status --cluster` asked of the first node (which gathers every node's fibers), and the resident
/// memory of an idle node.
enum ClusterStartBenchmark {
    struct Figures {
        var startMilliseconds: Double
        var statusMilliseconds: Double
        var fibersReported: Int
        var idleResidentMB: Double
    }

    static func run(nodes: Int, fibers: Int) async throws -> Figures {
        let folder = try WireLatencyBench.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let entries = "\(folder)/entries.json"
        let list = (0..<fibers).map { #"{"id":"c\#($0)","plugin":"counter","isolate":{"counter":true}}"# }.joined(separator: ",")
        try #"{"version":1,"entries":[\#(list)]}"#.write(toFile: entries, atomically: true, encoding: .utf8)
        let executable = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
            .deletingLastPathComponent().appendingPathComponent("cordis-node").path
        let first = "unix:\(folder)/n0.sock"
        var children: [Process] = []
        defer {
            for child in children where child.isRunning {
                kill(child.processIdentifier, SIGKILL)
                child.waitUntilExit()
            }
        }
        let clock = ContinuousClock()
        let start = clock.now
        for index in 0..<nodes {
            var arguments = ["--name", "n\(index)", "--entries", entries, "--listen", "unix:\(folder)/n\(index).sock", "--log-level", "warn"]
            if index > 0 { arguments += ["--peer", first] }
            let process = Process()
            process.executableURL = URL(fileURLWithPath: executable)
            process.arguments = arguments
            process.standardOutput = FileHandle.nullDevice
            try process.run()
            children.append(process)
        }
        let console = try await connect(to: try Address(parsing: first), within: .seconds(30))
        defer { Task { await console.close() } }
        while true {
            let answer = try await console.request(.members)
            let reachable = answer["members"]?.arrayValue?.filter { $0["reachable"]?.boolValue == true }.count ?? 0
            if reachable == nodes { break }
            if clock.now - start > .seconds(60) { throw BenchmarkError("only \(reachable) of \(nodes) members reachable after 60 s") }
            try await Task.sleep(for: .milliseconds(1))
        }
        let started = (clock.now - start).milliseconds
        // Every node also settled its own fibers: wait until the cluster status shows them all active.
        var reported = 0
        let settleStart = clock.now
        while reported < nodes * fibers {
            let answer = try await console.request(.status, args: ["cluster": true], timeout: .seconds(30))
            reported = activeFibers(in: StatusPaging.join(answer))
            if clock.now - settleStart > .seconds(60) { throw BenchmarkError("only \(reported) fibers active after 60 s") }
        }
        let statusStart = clock.now
        let answer = try await console.request(.status, args: ["cluster": true], timeout: .seconds(30))
        let status = (clock.now - statusStart).milliseconds
        let count = activeFibers(in: StatusPaging.join(answer))
        // Idle: give the last node a moment with nothing to do, then read its resident memory.
        try await Task.sleep(for: .milliseconds(500))
        let resident = ProcessProbe.residentMB(pid: children[nodes - 1].processIdentifier)
        return Figures(startMilliseconds: started, statusMilliseconds: status, fibersReported: count, idleResidentMB: resident)
    }

    private static func activeFibers(in answer: JSONValue) -> Int {
        (answer["nodes"]?.arrayValue ?? []).reduce(0) { total, node in
            total + (node["fibers"]?.arrayValue?.filter { $0["state"]?.stringValue == "active" }.count ?? 0)
        }
    }

    private static func connect(to address: Address, within limit: Duration) async throws -> ControlClient {
        let clock = ContinuousClock()
        let start = clock.now
        while true {
            do {
                return try await ControlClient.connect(to: address, name: "bench")
            } catch {
                if clock.now - start > limit { throw error }
                try await Task.sleep(for: .milliseconds(2))
            }
        }
    }
}
