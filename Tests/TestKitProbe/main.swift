// A test process that uses CordisTestKit and then waits to be killed: CordisTestKitTests starts it,
// reads its nodes' process ids (and etcd's, with `etcd`), kills it with SIGKILL and checks that none
// outlives it.
import CordisTestKit
import Foundation

let arguments = Array(CommandLine.arguments.dropFirst())
let count = Int(arguments.first ?? "") ?? 2
let etcd = arguments.contains("etcd")

/// This process's children whose command is `name`, read from /proc.
func children(named name: String) -> [pid_t] {
    let me = getpid()
    let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
    return entries.compactMap { entry -> pid_t? in
        guard let pid = pid_t(entry), let stat = try? String(contentsOfFile: "/proc/\(entry)/stat", encoding: .utf8),
              let open = stat.firstIndex(of: "("), let close = stat.lastIndex(of: ")") else { return nil }
        // After the command: state, then the parent's id.
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard stat[stat.index(after: open)..<close] == name, fields.count > 1, pid_t(fields[1]) == me else { return nil }
        return pid
    }
}

do {
    let names = (0..<max(1, min(count, 8))).map { "p\($0)" }
    let cluster = try await NodeCluster.start(
        names.map { NodeSpec($0, json: #"[{"id": "clock", "plugin": "clock"}]"#) },
        options: ClusterOptions(discovery: etcd ? .etcd : .mesh))
    var lines = "folder \(cluster.folder.path)\n"
    lines += cluster.nodes.map { "node \($0.name) \($0.process.process.processIdentifier)\n" }.joined()
    lines += children(named: "etcd").map { "etcd etcd \($0)\n" }.joined()
    lines += "ready\n"
    FileHandle.standardOutput.write(Data(lines.utf8))
    // Holds the cluster until the process is killed.
    while cluster.nodes.count > 0 { try await Task.sleep(for: .seconds(3600)) }
} catch {
    print("error: \(error)")
    exit(1)
}
