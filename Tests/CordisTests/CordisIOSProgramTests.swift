import CordisJSON
import Testing
@testable import Cordis

// A plugin set written in cordis-ios's public API only, as a cordis-ios app would write it; each
// scenario records what it observed, and the test asserts the record.

enum WeatherKey: ServiceKey {
    typealias Value = WeatherService
    static let name = "weather"
}

enum UnitsIntercept: InterceptKey {
    struct Config: Codable, Sendable { var unit: String }
    static let name = "weather"
}

enum Forecasted: EventKey {
    typealias Args = Int
    typealias Result = String
    static let name = "forecasted"
}

/// What the program observed, in order.
@CordisActor
enum ProgramLog {
    static var lines: [String] = []
}

@CordisActor @Service(WeatherKey.self)
final class WeatherService {
    private(set) var degrees = 0
    var online = true

    func setup(_ scope: EffectScope) async throws {
        degrees = 21
        ProgramLog.lines.append("weather setup")
        try scope.collect { ProgramLog.lines.append("weather stopped") }
    }

    func check() -> Bool { online }

    func report(for ctx: Context) -> String {
        "\(degrees) \(ctx.interceptConfig(UnitsIntercept.self)?.unit ?? "C")"
    }
}

struct PanelConfig: Codable, Sendable {
    var title: String
}

struct EmptyTitle: Error, CustomStringConvertible {
    var description: String { "title must not be empty" }
}

@CordisActor @Plugin
final class WeatherPanel {
    typealias Config = PanelConfig
    @Inject(WeatherKey.self) var weather: WeatherService

    static func validate(_ config: PanelConfig) throws {
        if config.title.isEmpty { throw EmptyTitle() }
    }

    func apply(_ scope: EffectScope) async throws {
        let weather = try ctx[WeatherKey.self]
        ProgramLog.lines.append("\(config.title): \(weather.report(for: ctx))")
        try ctx.effect("panel", sync: {
            ProgramLog.lines.append("panel shown")
            return { ProgramLog.lines.append("panel hidden") }
        })
        try ctx.onBail(Forecasted.self) { $0 > 30 ? "hot" : nil }
    }
}

@CordisActor @Plugin
final class Idle {
    typealias Config = NoConfig
}

@Suite("A cordis-ios program", .serialized, .timeLimit(.minutes(1))) @CordisActor
struct CordisIOSProgramTests {
    @Test func aPluginSetWrittenInCordisIOSSpellingRunsAsCordisIOSDocuments() async throws {
        ProgramLog.lines = []
        let root = Context()
        let logs = CapturedLogs()
        try root.exportLogs(to: logs)

        // Services with setup and check; consumers start once setup returns.
        let panel = try root.intercept(UnitsIntercept.self, .init(unit: "F")).plugin(
            WeatherPanel.self, config: PanelConfig(title: "Today"))
        let weather = try root.plugin(WeatherService.self)
        try await weather.await()
        try await panel.await()
        ProgramLog.lines.append("panel \(panel.state)")
        ProgramLog.lines.append("service named \(weather.name)")

        // check() gates availability; recheck asks again.
        let service = try #require(root.get(WeatherKey.self, strict: true))
        service.online = false
        root.recheck(WeatherKey.self)
        await root.settled()
        ProgramLog.lines.append("offline: panel \(panel.state)")
        service.online = true
        root.recheck(WeatherKey.self)
        await root.settled()

        // Events by key, bailing listeners.
        ProgramLog.lines.append("forecast 35: \(try await root.serial(Forecasted.self, 35) ?? "none")")
        ProgramLog.lines.append("forecast 10: \(try await root.serial(Forecasted.self, 10) ?? "none")")

        // validate refuses a config; NoConfig plugins take none.
        do {
            try root.plugin(WeatherPanel.self, config: PanelConfig(title: ""))
        } catch {
            ProgramLog.lines.append("refused: \(error)")
        }
        try await root.plugin(Idle.self, config: NoConfig()).await()

        // Realms and the inject closure.
        let realm = root.makeRealm(name: "weather")
        let isolated = root.isolate("weather", realm: realm)
        ProgramLog.lines.append("isolated realm: \(isolated.realm(of: "weather") == realm)")
        try root.inject([WeatherKey.self]) { ctx, _ in
            ProgramLog.lines.append("inject closure sees \(try ctx[WeatherKey.self].degrees)")
        }
        await root.settled()

        // The Loader over a store, reconciled with a whole list of entries.
        var catalog = PluginCatalog()
        catalog.register(WeatherPanel.self, as: "panel")
        let loader = Loader(ctx: root, catalog: catalog, store: InMemoryEntryStore())
        try await loader.start()
        try await loader.reconcile([Entry(id: "tomorrow", plugin: "panel", config: ["title": "Tomorrow"])])
        ProgramLog.lines.append("entries: \(loader.entries.map(\.id)), fiber \(loader.fiber(for: "tomorrow")?.state.rawValue ?? "none")")

        try await weather.dispose()
        ProgramLog.lines.append("after withdrawal: panel \(panel.state)")

        #expect(ProgramLog.lines == [
            "weather setup",
            "Today: 21 F",
            "panel shown",
            "panel active",
            "service named weather",
            "panel hidden",
            "offline: panel pending",
            "Today: 21 F",
            "panel shown",
            "forecast 35: hot",
            "forecast 10: none",
            "refused: plugin \"WeatherPanel\": invalid config: title must not be empty",
            "isolated realm: true",
            "inject closure sees 21",
            "Tomorrow: 21 C",
            "panel shown",
            "entries: [\"tomorrow\"], fiber active",
            "panel hidden",
            "panel hidden",
            "weather stopped",
            "after withdrawal: panel pending",
        ])
        #expect(logs.at(.error).isEmpty)
    }
}
