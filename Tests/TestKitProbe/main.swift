// A test process that uses CordisTestKit and then waits to be killed: CordisTestKitTests starts it,
// reads its nodes' process ids, kills it with SIGKILL and checks that no node outlives it.
import CordisTestKit
import Foundation

let count = Int(CommandLine.arguments.dropFirst().first ?? "") ?? 2
do {
    let names = (0..<max(1, min(count, 8))).map { "p\($0)" }
    let cluster = try await NodeCluster.start(names.map { NodeSpec($0, json: #"[{"id": "clock", "plugin": "clock"}]"#) })
    var lines = "folder \(cluster.folder.path)\n"
    lines += cluster.nodes.map { "node \($0.name) \($0.process.process.processIdentifier)\n" }.joined()
    lines += "ready\n"
    FileHandle.standardOutput.write(Data(lines.utf8))
    // Holds the cluster until the process is killed.
    while cluster.nodes.count > 0 { try await Task.sleep(for: .seconds(3600)) }
} catch {
    print("error: \(error)")
    exit(1)
}
