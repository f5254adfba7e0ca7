// cordis-ios's demo program on Linux, written with cordis-ios's public API: a Loader runs three entries
// from an entries file (a `clock` service, a `greeter` that injects it, a `noisy` plugin that fails),
// then disables and re-enables `clock`, printing each entry's state after every step.
//
//   cordis-ios-demo <entries.json>
//
// The file is created with the three default entries when it does not exist. Errors logged by the
// plugins are printed as `[error] <logger>: <message>`.
import Cordis
import Foundation

enum ClockKey: ServiceKey {
    typealias Value = ClockService
    static let name = "clock"
}

/// The `clock` service: tells the time.
@CordisActor @Service(ClockKey.self)
final class ClockService {
    func now() -> Date { Date() }
}

struct GreeterConfig: Codable, Sendable {
    var name: String?
}

/// Greets while `clock` is provided, and says so when it stops.
@CordisActor @Plugin
final class GreeterPlugin {
    typealias Config = GreeterConfig
    @Inject(ClockKey.self) var clock: ClockService

    func apply(_ scope: EffectScope) async throws {
        let time = try clock.now().formatted(.iso8601)
        print("greeter: active at \(time)")
        try scope.collect { print("greeter: disposed") }
    }
}

/// Why `noisy` never starts.
struct DemoError: Error, CustomStringConvertible {
    var description: String { "DemoError: noisy plugin refused to start" }
}

/// A plugin that always fails, to show the `failed` state.
@CordisActor @Plugin
final class NoisyPlugin {
    func apply(_ scope: EffectScope) async throws {
        throw DemoError()
    }
}

/// The entries the demo starts with when its file does not exist yet.
let defaultEntries = [
    Entry(id: "clock", plugin: "clock"),
    Entry(id: "greeter", plugin: "greeter", config: .object(["name": .string("Ovidiu")])),
    Entry(id: "noisy", plugin: "noisy"),
]

/// Prints one line per entry: its id padded to 9 characters, then its fiber's state (`disposed` for a
/// disabled entry, `missing` for one that has no fiber).
@CordisActor
func printStates(of loader: Loader) {
    for entry in loader.entries {
        let state = loader.fiber(for: entry.id).map { "\($0.state)" } ?? (entry.disabled ? "disposed" : "missing")
        let padding = String(repeating: " ", count: max(0, 9 - entry.id.count))
        print(entry.id + padding + state)
    }
}

/// Runs the demo over the entries file at `url`.
@CordisActor
func runDemo(entriesAt url: URL) async throws {
    let root = Context()
    try root.logger.exporter(ClosureExporter(level: .error) { message in
        print("[\(message.level)] \(message.name): \(message.text)")
    })

    var catalog = PluginCatalog()
    catalog.register(ClockService.self, as: "clock")
    catalog.register(GreeterPlugin.self, as: "greeter")
    catalog.register(NoisyPlugin.self, as: "noisy")
    let loader = Loader(ctx: root, catalog: catalog, store: FileEntryStore(url: url))

    try await loader.start()
    printStates(of: loader)
    print("--- disable clock")
    try await loader.setDisabled(id: "clock", true)
    printStates(of: loader)
    print("--- enable clock")
    try await loader.setDisabled(id: "clock", false)
    printStates(of: loader)
}

let arguments = CommandLine.arguments.dropFirst()
guard arguments.count == 1, let path = arguments.first else {
    FileHandle.standardError.write(Data("usage: cordis-ios-demo <entries.json>\n".utf8))
    exit(64)
}
let entriesURL = URL(fileURLWithPath: path)
do {
    if !FileManager.default.fileExists(atPath: entriesURL.path) {
        try FileEntryStore(url: entriesURL).save(defaultEntries)
    }
    try await runDemo(entriesAt: entriesURL)
} catch {
    FileHandle.standardError.write(Data("error: \(error)\n".utf8))
    exit(1)
}
