import Cordis

/// The config of the benchmark's worker plugin.
private struct WorkerConfig: Codable, Sendable {
    var n: Int
}

/// The value the benchmark's `clock` service provides.
@CordisActor
private final class BenchClock {
    var ticks = 0
}

/// The benchmark's `clock` service.
private enum BenchClockKey: ServiceKey {
    typealias Value = BenchClock
    static let name = "clock"
}

/// Starts a Loader tree of `entries` entries from an `InMemoryEntryStore` (one `clock` provider, then
/// groups of up to 100 workers, every other worker injecting `clock`), changes the config of one worker
/// (it provides no service), and stops the tree.
///
/// Returns, in order: the entry count, the start time, the config change time, how many fibers entered
/// `loading` during the change (exactly one when only that entry reloads), and the stop time. Times are
/// in milliseconds.
@CordisActor
func runLoaderBenchmark(entries: Int) async -> [(String, Double)] {
    var catalog = PluginCatalog()
    catalog.register(
        FunctionPlugin<NoConfig>(name: "clock", provides: [BenchClockKey.self]) { ctx, _, _ in
            try ctx.provide(BenchClockKey.self, BenchClock())
        }, as: "clock")
    catalog.register(
        FunctionPlugin<WorkerConfig>(name: "worker") { _, config, scope in
            try scope.collect { _ = config.n }
        }, as: "worker")
    catalog.register(
        FunctionPlugin<WorkerConfig>(name: "clock-worker", inject: [BenchClockKey.self]) { _, config, scope in
            try scope.collect { _ = config.n }
        }, as: "clock-worker")

    var top: [Entry] = [Entry(id: "clock", plugin: "clock")]
    var count = 1
    var target = ""
    var group = 0
    while count < entries {
        group += 1
        count += 1
        var children: [Entry] = []
        while children.count < 100, count < entries {
            let id = "w\(count)"
            let plugin = count % 2 == 0 ? "clock-worker" : "worker"
            children.append(Entry(id: id, plugin: plugin, config: ["n": .integer(count)]))
            if target.isEmpty || count == entries / 2 { target = id }
            count += 1
        }
        top.append(Entry(id: "g\(group)", children: children))
    }

    let root = Context()
    let loader = Loader(ctx: root, catalog: catalog, store: InMemoryEntryStore(EntryTree(entries: top)))
    let clock = ContinuousClock()
    var results: [(String, Double)] = [("entries", Double(count))]
    do {
        let start = try await clock.measure { try await loader.start() }
        results.append(("start ms", start.milliseconds))

        var loads = 0
        let listener = try root.on(StatusEvent.self) { (change: StatusEvent.Args) in
            if change.fiber.state == .loading { loads += 1 }
        }
        let change = try await clock.measure {
            try await loader.update(id: target, config: ["n": -1])
        }
        try await listener.dispose()
        results.append(("config change ms", change.milliseconds))
        results.append(("fibers reloaded", Double(loads)))

        let stop = await clock.measure { await loader.stop() }
        results.append(("stop ms", stop.milliseconds))
    } catch {
        results.append(("error: \(error)", 0))
    }
    return results
}

extension Duration {
    var milliseconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) * 1_000 + Double(attoseconds) / 1e15
    }
}
