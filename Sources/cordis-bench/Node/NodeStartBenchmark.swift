import Cordis
import CordisNode
import CordisWire
import Foundation

/// `cordis-bench node`: a node (in this process, on a Unix socket, no peers) whose entries file holds
/// `size` built-in `counter` entries, each in a realm of its own (private) or, one in ten, in a shared
/// realm (so it is exported to the cluster). Measures the node's start (the Loader settled, every export
/// decided) and its stop, for two sizes: the ratio t(large)/t(small) shows how the cost grows with the
/// number of providers (4 for 1,000 → 4,000 when linear; 16 when quadratic).
@CordisActor
enum NodeStartBenchmark {
    /// Start and stop of one node of `size` entries, in milliseconds.
    static func measure(size: Int) async throws -> (start: Double, stop: Double) {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("cordis-bench-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let entries = (0..<size).map { index -> Entry in
            let realm: IsolateSpec = index % 10 == 0 ? .shared("shared-\(index)") : .local
            return Entry(id: "c\(index)", plugin: "counter", isolate: ["counter": realm])
        }
        let store = InMemoryEntryStore(EntryTree(entries: entries))
        let configuration = NodeConfiguration(name: "bench", listen: [try Address(parsing: "unix:\(folder.path)/n.sock")])
        let node = try Node(
            configuration: configuration, catalog: BuiltinCatalog.plugins(node: "bench"),
            remoteServices: BuiltinCatalog.remoteServices, store: store)
        let clock = ContinuousClock()
        let start = try await clock.measure { try await node.start() }
        let stop = await clock.measure { await node.stop() }
        return (start.milliseconds, stop.milliseconds)
    }

    /// Rows for 1,000 and 4,000 entries (or 250 and 1,000 with `quick`) and the growth ratios.
    static func run(quick: Bool) async throws -> (rows: [[String: Double]], ratios: [String: Double]) {
        let sizes = quick ? [250, 1_000] : [1_000, 4_000]
        var rows: [[String: Double]] = []
        for size in sizes {
            let (start, stop) = try await measure(size: size)
            rows.append(["entries": Double(size), "start_ms": start, "stop_ms": stop])
        }
        let small = rows[0], large = rows[1]
        return (rows, [
            "start t(\(sizes[1]))/t(\(sizes[0]))": (large["start_ms"] ?? 0) / max(0.001, small["start_ms"] ?? 1),
            "stop t(\(sizes[1]))/t(\(sizes[0]))": (large["stop_ms"] ?? 0) / max(0.001, small["stop_ms"] ?? 1),
        ])
    }
}
