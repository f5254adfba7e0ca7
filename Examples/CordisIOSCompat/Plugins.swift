// The plugins of the compatibility program, written in cordis-ios's public API only, as a cordis-ios app
// writes them.
import Cordis
import Foundation
import Synchronization

/// Prints one observation of the program.
func say(_ line: String) {
  print(line)
}

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

@CordisActor @Service(WeatherKey.self)
final class WeatherService {
  private(set) var degrees = 0
  var online = true

  func setup(_ scope: EffectScope) async throws {
    degrees = 21
    say("weather setup")
    try scope.collect { say("weather stopped") }
  }

  func check() -> Bool { online }

  /// Tells the listeners in the service's realm only.
  func announce(_ text: String) throws {
    try ctx.emit(scope: eventScope, Alarm.self, text)
  }

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
    say("\(config.title): \(weather.report(for: ctx))")
    try ctx.effect("panel", sync: {
      say("panel shown")
      return { say("panel hidden") }
    })
    try ctx.onBail(Forecasted.self) { $0 > 30 ? "hot" : nil }
  }
}

@CordisActor @Plugin
final class Idle {
  typealias Config = NoConfig
}

struct GreetingConfig: Codable, Sendable {
  var greeting: String
}

/// A function plugin: runs while `weather` is provided, refuses an empty greeting.
let greeting = FunctionPlugin<GreetingConfig>(
  name: "greeting", inject: [WeatherKey.self],
  validate: { config in if config.greeting.isEmpty { throw EmptyTitle() } }
) { ctx, config, scope in
  say("\(config.greeting) at \(try ctx[WeatherKey.self].degrees)")
  try scope.collect { say("\(config.greeting) gone") }
}

/// A store of the Loader's entries written over `[Entry]`, as cordis-ios's `EntryStore` is.
final class ListStore: EntryStore {
  private let saved = Mutex<[Entry]>([])

  func load() throws -> [Entry] {
    saved.withLock { $0 }
  }

  func save(_ entries: [Entry]) throws {
    saved.withLock { $0 = entries }
    say("store saved \(entries.map { "\($0.id)\($0.disabled ? " (disabled)" : "")" })")
  }
}

struct RangeConfig: Codable, Sendable {
  var low: Int
  var high: Int
}

/// Refuses a config with several problems at once, as cordis-ios's `ValidationError` reports them.
@CordisActor @Plugin
final class Thermostat {
  typealias Config = RangeConfig

  static func validate(_ config: RangeConfig) throws {
    var issues: [ValidationIssue] = []
    if config.low < 0 { issues.append(ValidationIssue(message: "must not be negative", path: ["low"])) }
    if config.high < config.low { issues.append(ValidationIssue(message: "high is below low")) }
    if !issues.isEmpty { throw ValidationError(issues: issues) }
  }
}

enum Alarm: EventKey {
  typealias Args = String
  typealias Result = Never
  static let name = "alarm"
}

enum Pricing: EventKey {
  typealias Args = Int
  typealias Result = Int
  static let name = "pricing"
}

struct AlarmFailed: Error, CustomStringConvertible {
  var who: String
  var description: String { "\(who) failed" }
}

enum UnprovidedKey: ServiceKey {
  typealias Value = Int
  static let name = "unprovided"
}

/// Admits the listeners registered on a context intercepted with `Audience(loud: true)`.
enum Audience: InterceptKey {
  struct Config: Sendable { var loud: Bool }
  static let name = "audience"
}

struct LoudOnly: EventScope {
  func filter(_ hookContext: Context) -> Bool {
    hookContext.interceptConfig(Audience.self)?.loud == true
  }
}

/// Declares what it injects in cordis-ios's form: `injections`, with an intercept config for the service.
@CordisActor @Plugin
final class Thermometer {
  static let injections = [Injection(WeatherKey.self, config: UnitsIntercept.Config(unit: "K"))]

  func apply(_ scope: EffectScope) async throws {
    say("thermometer: \(try ctx[WeatherKey.self].report(for: ctx))")
  }
}
