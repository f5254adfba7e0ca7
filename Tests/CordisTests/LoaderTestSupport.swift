import CordisJSON
import Foundation
import Synchronization
import Testing

@testable import Cordis

/// Counts, per plugin name, how many times its fibers loaded and unloaded.
@CordisActor
final class LoaderSpy {
    private(set) var applied: [String: Int] = [:]
    private(set) var disposed: [String: Int] = [:]

    func apply(_ name: String) { applied[name, default: 0] += 1 }
    func dispose(_ name: String) { disposed[name, default: 0] += 1 }
    func calls(_ name: String) -> Int { applied[name] ?? 0 }
    func disposals(_ name: String) -> Int { disposed[name] ?? 0 }
    func reset() {
        applied.removeAll()
        disposed.removeAll()
    }
}

extension PluginCatalog {
    /// Registers a function plugin taking any JSON config that counts its loads and unloads in `spy`.
    @CordisActor
    mutating func registerCounted(
        _ name: String, spy: LoaderSpy, inject: [String] = [], provides: [String] = []
    ) {
        let plugin = FunctionPlugin<JSONValue>(
            name: name, injections: inject.map { Injection(name: $0) }, providing: provides, validate: nil
        ) { _, config, scope in
            spy.apply(name)
            for service in provides { try scope.ctx.provide(name: service, value: config) }
            try scope.collect { spy.dispose(name) }
        }
        register(plugin, as: name)
    }
}

/// A fresh temporary folder for one test, removed at the end.
final class LoaderFolder {
    let url: URL
    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("cordis-loader-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }
    deinit { try? FileManager.default.removeItem(at: url) }
    var entries: URL { url.appendingPathComponent("entries.json") }
    func write(_ text: String) throws { try Data(text.utf8).write(to: entries) }
    func bytes() throws -> Data { try Data(contentsOf: entries) }
    func text() throws -> String { try String(contentsOf: entries, encoding: .utf8) }
}

/// A store in memory that records every tree it saved, in order.
final class RecordingStore: EntryStore {
    private let state: Mutex<(tree: EntryTree, saved: [EntryTree])>

    init(_ tree: EntryTree = EntryTree()) {
        state = Mutex((tree, []))
    }

    var saved: [EntryTree] { state.withLock { $0.saved } }

    func load() throws -> EntryTree { state.withLock { $0.tree } }

    func save(_ tree: EntryTree) throws {
        state.withLock {
            $0.tree = tree
            $0.saved.append(tree)
        }
    }
}

/// The number of fibers that entered `loading` while `body` ran.
@CordisActor
func loadingTransitions(on ctx: Context, during body: @CordisActor () async throws -> Void) async throws -> Int {
    var count = 0
    let handle = try ctx.on(StatusEvent.self) { (change: StatusEvent.Args) in
        if change.fiber.state == .loading { count += 1 }
    }
    try await body()
    try await handle.dispose()
    return count
}

/// The value a fiber's injected `bar` resolves to (the config of the provider), if it is loaded.
@CordisActor
func barValue(_ fiber: Fiber?) -> JSONValue? {
    guard let record = fiber?.providerRecords["bar"] else { return nil }
    return (record.value as? JSONValue)?["value"]
}
