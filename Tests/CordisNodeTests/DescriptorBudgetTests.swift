import CordisNode
import CordisProcessTesting
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A node spends only part of its descriptor limit on connections, so a flood of connections can never
/// leave it unable to save its entries file.
@Suite("Descriptor budget")
struct DescriptorBudgetTests {
    @Test("the budget keeps a reserve, is capped, and shares out between listeners")
    func budgetRule() throws {
        let small = try DescriptorBudget(limit: 200)
        #expect(small.connections == 200 - DescriptorBudget.reserve)
        #expect(small.connectionsPerListener(2) == (200 - DescriptorBudget.reserve) / 2)
        #expect(small.connectionsPerListener(0) == small.connections)
        #expect(try DescriptorBudget(limit: 1 << 40).connections == DescriptorBudget.maximumConnections)
        #expect(throws: NodeStartError.self) { try DescriptorBudget(limit: 100) }
    }

    @Test("a node refuses to start below the minimum descriptor limit, with a clear error")
    func tooLowLimitRefused() async throws {
        try await TestCluster.run { cluster in
            try cluster.folder.write("a.json", "[]")
            let process = try NodeProcess(
                name: "a",
                arguments: ["--nofile=100:100", NodeProcess.nodeExecutable.path, "--name", "a",
                            "--entries", cluster.folder.path("a.json"), "--listen", "unix:\(cluster.folder.path("a.sock"))"],
                directory: cluster.folder.url, executable: URL(fileURLWithPath: "/usr/bin/prlimit"))
            #expect(await process.exitCode() == 1)
            #expect(process.text.contains("open-file limit is 100"))
        }
    }

    @Test("with 300 connections held open under a 200-descriptor limit, a console's change is still saved")
    func floodCannotStopSaving() async throws {
        try await TestCluster.run { cluster in
            let folder = cluster.folder
            try folder.write("a.json", #"{"version": 1, "entries": [{"id": "counter", "plugin": "counter"}]}"#)
            let process = try NodeProcess(
                name: "a",
                arguments: ["--nofile=200:200", NodeProcess.nodeExecutable.path, "--name", "a",
                            "--entries", folder.path("a.json"), "--listen", "unix:\(folder.path("a.sock"))"]
                    + ClusterMember.timing,
                directory: folder.url, executable: URL(fileURLWithPath: "/usr/bin/prlimit"))
            let a = ClusterMember(name: "a", folder: folder, arguments: [], environment: [:], process: process)
            cluster.track(a)
            try #require(await process.waitForLine(containing: "listening on"))
            let console = try await cluster.control(a)
            try #require(try await console.awaitFiber(ofEntry: "counter", inState: "active") != nil)

            var held: [Int32] = []
            defer { for fd in held { close(fd) } }
            for _ in 0..<300 {
                guard let fd = LogFloodTests.connectUnix(a.socket) else { continue }
                held.append(fd)
            }
            // The node has taken every connection it can once it refuses one: by its budget, or (without
            // one) because accept itself ran out of descriptors.
            try #require(await process.waitFor("a refused connection") {
                $0.contains("connectionLimitReached") || $0.contains("acceptFailed") || $0.contains("handshakeShed")
            })
            _ = try await console.request(.disable, args: ["entry": "counter"])
            let saved = try String(contentsOfFile: folder.path("a.json"), encoding: .utf8)
            #expect(saved.contains(#""disabled": true"#), "\(saved)")
            #expect(process.process.isRunning)
            #expect(!process.text.contains("Too many open files"), "\(process.text)")
        }
    }
}
