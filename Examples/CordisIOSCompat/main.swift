// A cordis-ios program on Linux: every scenario uses cordis-ios's public API as a cordis-ios app would,
// and prints what it observed. The tests run it and compare its output line by line.
import Cordis
import Foundation

@CordisActor
func services(_ root: Context) async throws -> Fiber {
  say("== services, check, intercepts, events, validate")
  // Services with setup and check; consumers start once setup returns.
  let panel = try root.intercept(UnitsIntercept.self, .init(unit: "F")).plugin(
    WeatherPanel.self, config: PanelConfig(title: "Today"))
  let weather = try root.plugin(WeatherService.self)
  try await weather.await()
  try await panel.await()
  say("panel \(panel.state)")
  say("service named \(weather.name)")

  // check() gates availability; recheck asks again.
  guard let service = root.get(WeatherKey.self) else { throw EmptyTitle() }
  service.online = false
  root.recheck(WeatherKey.self)
  await root.settled()
  say("offline: panel \(panel.state)")
  service.online = true
  root.recheck(WeatherKey.self)
  await root.settled()

  // get hands back a service the plugin does not inject (strict: only an available one).
  let reader = FunctionPlugin<NoConfig>(name: "reader") { ctx, _, _ in
    if let weather = ctx.get(WeatherKey.self) { say("read without inject: \(weather.degrees) degrees") }
    say("unprovided: \(ctx.get(UnprovidedKey.self) == nil)")
  }
  let reading = try root.plugin(reader)
  try await reading.await()
  try await reading.dispose()

  // Events by key, bailing listeners, a listener put first.
  try root.on(Forecasted.self, options: EventOptions(prepend: true)) { degrees in say("forecast heard: \(degrees)") }
  say("forecast 35: \(try await root.serial(Forecasted.self, 35) ?? "none")")
  say("forecast 10: \(try await root.serial(Forecasted.self, 10) ?? "none")")

  // validate refuses a config; NoConfig plugins take none.
  do {
    try root.plugin(WeatherPanel.self, config: PanelConfig(title: ""))
  } catch {
    say("refused: \(error)")
  }
  try await root.plugin(Idle.self, config: NoConfig()).await()
  return weather
}

@CordisActor
func realmsAndContexts(_ root: Context) async throws {
  say("== realms and contexts")
  let realm = root.makeRealm(name: "weather")
  let isolated = root.isolate("weather", realm: realm)
  say("isolated realm: \(isolated.realm(of: "weather") == realm), root realm: \(root.realm(of: "weather") == nil)")
  say("realm ids: \(realm.id > 0), \(root.makeRealm(name: "other").id != realm.id)")
  let extended = root.extend()
  say("extend: parent is root \(extended.parent === root), root \(extended.root === root), isRoot \(root.isRoot) \(extended.isRoot)")
  say("isolate's parent: \(isolated.parent === root)")
  try root.inject([WeatherKey.self]) { ctx, _ in
    say("inject closure sees \(try ctx[WeatherKey.self].degrees); its root is root \(ctx.root === root), parent \(ctx.parent === root)")
  }
  await root.settled()
}

@CordisActor
func functionPlugins(_ root: Context) async throws {
  say("== function plugins")
  let typed = try root.plugin(greeting, config: GreetingConfig(greeting: "hi"))
  try await typed.await()
  let raw = try root.plugin(greeting as any AnyPlugin, rawConfig: ["greeting": "hey"] as JSONValue)
  try await raw.await()
  say("fibers named \(typed.name), \(raw.name): \(typed.state), \(raw.state)")
  say("effects of \(typed.name): \(typed.getEffects().map(\.label)), missing \(typed.missingInjections)")
  do {
    try root.plugin(greeting, config: GreetingConfig(greeting: ""))
  } catch {
    say("refused: \(error)")
  }
  try await raw.update(["greeting": "hello"] as JSONValue)
  try await raw.dispose()
  try await typed.dispose()
  let idle = try root.plugin(PluginType(Idle.self), rawConfig: nil)
  try await idle.await()
  say("PluginType: \(idle.name) \(idle.state), uid set \(idle.uid != nil)")
  try idle.assertActive()
  try await idle.dispose()
  say("disposed: uid \(idle.uid.map(String.init) ?? "nil")")
  do {
    try idle.assertActive()
  } catch {
    say("assertActive after dispose: \(error)")
  }
}

@CordisActor
func logging(_ root: Context) async throws {
  say("== logger exporters")
  let plugin = FunctionPlugin<NoConfig>(name: "logging") { ctx, _, _ in
    try ctx.logger.exporter(ClosureExporter(level: .info) { message in
      say("exported [\(message.level)] \(message.name): \(message.text)")
    })
    ctx.logger.info("exporter on")
  }
  let fiber = try root.plugin(plugin)
  try await fiber.await()
  root.logger.info("while loaded")
  root.logger.error(EmptyTitle())
  try await fiber.dispose()
  root.logger.info("after unload: not exported")
  let printer = try root.logger.exporter(PrintExporter(level: .warn))
  root.logger.warn("printed by PrintExporter")
  root.logger.named("forecast").warn("a named logger")
  try await printer.dispose()
  root.logger.warn("after dispose: not printed")
}

@CordisActor
func loader(_ root: Context) async throws {
  say("== Loader over a store of [Entry]")
  var catalog = PluginCatalog()
  catalog.register(WeatherPanel.self, as: "panel")
  catalog.register(greeting, as: "greeting")
  let store = ListStore()
  let loader = Loader(ctx: root, catalog: catalog, store: store)
  try await loader.start()
  try await loader.reconcile([Entry(id: "tomorrow", plugin: "panel", config: ["title": "Tomorrow"])])
  try await loader.add(Entry(id: "hello", plugin: "greeting", config: ["greeting": "ahoy"]))
  say("entries: \(loader.entries.map(\.id)), fibers \(loader.fiber(for: "tomorrow")?.state.rawValue ?? "none") \(loader.fiber(for: "hello")?.state.rawValue ?? "none")")
  try await loader.update(id: "hello", config: ["greeting": "ahoy there"])
  do {
    try await loader.update(id: "hello", config: ["greeting": ""])
  } catch {
    say("refused: \(error)")
  }
  try await loader.setDisabled(id: "tomorrow", true)
  say("tomorrow: \(loader.entry("tomorrow")?.disabled == true ? "disabled" : "enabled"), fiber \(loader.fiber(for: "tomorrow") == nil ? "none" : "running")")
  try await loader.remove(id: "hello")
  do {
    try await loader.remove(id: "hello")
  } catch LoaderError.unknownEntry("hello") {
    say("removed twice: unknown entry")
  }
  say("stored: \(try (store.load() as [Entry]).map(\.id))")
  await loader.stop()

  // An entry isolated in a realm of its own waits for a provider there.
  let memory = InMemoryEntryStore([
    Entry(id: "solo", plugin: "greeting", config: ["greeting": "solo"], isolate: ["weather": .local])
  ])
  let isolatedLoader = Loader(ctx: root, catalog: catalog, store: memory)
  try await isolatedLoader.start()
  let solo = isolatedLoader.fiber(for: "solo")
  say("solo in a realm of its own: \(solo?.state.rawValue ?? "none"), missing \(solo?.missingInjections ?? [])")
  await isolatedLoader.stop()
  say("in memory: \(memory.entries.map(\.id))")
}

@CordisActor
func effects(_ root: Context) async throws {
  say("== effects and events")
  try root.once(Forecasted.self) { degrees in say("once: \(degrees)") }
  try root.emit(Forecasted.self, 1)
  try root.emit(Forecasted.self, 2)
  let handle = try root.effect("async") { scope in
    say("async effect ran")
    try scope.collect { say("async effect reverted") }
  }
  try await handle.ready()
  try await handle.dispose()
  let scoped = try root.effect("scoped", scoped: { scope in
    say("scoped effect ran")
    try scope.collect { say("scoped effect reverted") }
  })
  try await scoped.dispose()
}

@CordisActor
func errorsAndAborts(_ root: Context) async throws {
  say("== errors, aborts, adopted effects")
  do {
    try root.plugin(Thermostat.self, config: RangeConfig(low: -1, high: -5))
  } catch let error as CordisError {
    say("refused as invalid config \(error.code == .invalidConfig): \(error)")
  }
  let first = try root.on(Alarm.self) { who in throw AlarmFailed(who: who) }
  do {
    try await root.parallel(Alarm.self, "one")
  } catch let error as AggregateError {
    say("parallel, one failing: \(error.errors.count) error: \(error)")
  }
  let second = try root.on(Alarm.self) { _ in throw AlarmFailed(who: "second") }
  do {
    try await root.parallel(Alarm.self, "first")
  } catch let error as AggregateError {
    say("parallel, two failing: \(error.errors.count) errors: \(error)")
  }
  try await first.dispose()
  try await second.dispose()
  do {
    _ = try root[UnprovidedKey.self]
  } catch let error as CordisError {
    say("missing inject \(error.code == .missingInject): \(error)")
  }
  let gone = try root.plugin(Idle.self)
  try await gone.await()
  let goneContext = gone.ctx
  try await gone.dispose()
  do {
    try goneContext.effect("late", sync: { nil })
  } catch let error as CordisError {
    say("inactive effect \(error.code == .inactiveEffect): \(error)")
  }
  let aborted = try root.effect("aborting") { scope in
    try scope.collect { say("aborting effect reverted") }
    throw EffectAbortedError()
  }
  try await aborted.ready()
  say("aborted effect ready, disposed \(aborted.isDisposed)")
  try await aborted.dispose()
  let listening = try root.effect("listening", scoped: { scope in
    let handle = try root.on(Alarm.self) { who in say("adopted listener heard \(who)") }
    try scope.collect(handle)
  })
  try root.emit(Alarm.self, "ring")
  say("effects of listening: \(root.fiber.getEffects().first { $0.label == "listening" }?.children.map(\.label) ?? [])")
  try await listening.dispose()
  try root.emit(Alarm.self, "after dispose")
}

@CordisActor
func scopedEvents(_ root: Context) async throws {
  say("== scoped events, waterfalls, core events")
  let loud = try root.intercept(Audience.self, .init(loud: true)).on(Alarm.self) { who in say("loud heard \(who)") }
  let quiet = try root.on(Alarm.self) { who in say("quiet heard \(who)") }
  try root.emit(scope: LoudOnly(), Alarm.self, "scoped")
  try root.emit(scope: nil, Alarm.self, "unscoped")
  try await loud.dispose()
  try await quiet.dispose()
  let elsewhere = try root.isolate("weather").on(Alarm.self) { what in say("another realm heard \(what)") }
  let here = try root.on(Alarm.self) { what in say("weather's realm heard \(what)") }
  try root[WeatherKey.self].announce("storm")
  try await elsewhere.dispose()
  try await here.dispose()
  let tax = try root.on(Pricing.self) { price, next in try await next() + price / 10 }
  let discount = try root.on(Pricing.self) { price, next in
    let total = try await next()
    return total - 5
  }
  say("waterfall: \(try await root.waterfall(Pricing.self, 100) { 100 })")
  try await tax.dispose()
  try await discount.dispose()
  let twice = try root.on(Pricing.self) { _, next in
    _ = try await next()
    return try await next()
  }
  do {
    _ = try await root.waterfall(Pricing.self, 1) { 1 }
  } catch let error as CordisError {
    say("next twice \(error.code == .nextCalledMultipleTimes): \(error)")
  }
  try await twice.dispose()
  let events = Box<[String]>([])
  let status = try root.on(StatusEvent.self) { args in
    events.value.append("\(args.fiber.name) \(args.oldState) -> \(args.fiber.state)")
  }
  let plugins = try root.on(PluginEvent.self) { fiber in events.value.append("plugin \(fiber.name) \(fiber.state)") }
  let services = try root.on(ServiceEvent.self) { args in
    events.value.append("service \(args.name) \(args.value == nil ? "gone" : "provided")")
  }
  let idle = try root.plugin(Idle.self)
  try await idle.await()
  try await idle.dispose()
  let provided = try root.provide(UnprovidedKey.self, 1)
  try await provided.dispose()
  for line in events.value { say(line) }
  try await status.dispose()
  try await plugins.dispose()
  try await services.dispose()
}

@CordisActor
func catalogs(_ root: Context) async throws {
  say("== catalog resolve")
  var catalog = PluginCatalog()
  catalog.register(Idle.self, as: "idle")
  catalog.register(greeting, as: "greeting")
  say("resolved: \(catalog.resolve("idle")?.name ?? "nil"), \(catalog.resolve("greeting")?.name ?? "nil"), \(catalog.resolve("nothing") == nil ? "nothing is nil" : "?")")
  if let idle = catalog.resolve("idle") {
    let fiber = try root.plugin(idle, rawConfig: nil)
    try await fiber.await()
    say("started from resolve: \(fiber.name) \(fiber.state)")
    try await fiber.dispose()
  }
  let kelvin = FunctionPlugin<NoConfig>(
    name: "kelvin", injections: [Injection(WeatherKey.self, config: UnitsIntercept.Config(unit: "K"))]
  ) { ctx, _, _ in
    say("injection with a config: \(try ctx[WeatherKey.self].report(for: ctx))")
  }
  let fiber = try root.plugin(kelvin)
  try await fiber.await()
  say("kelvin injects \(kelvin.injections.map(\.name)), missing \(fiber.missingInjections)")
  try await fiber.dispose()

  let thermometer = try root.plugin(Thermometer.self)
  try await thermometer.await()
  say("Thermometer injects \(Thermometer.injections.map(\.name)): \(thermometer.state)")
  try await thermometer.dispose()

  let guarded = try root.plugin(greeting, config: GreetingConfig(greeting: "guarded"))
  try await guarded.await()
  try guarded.ctx.on(UpdateEvent.self) { args, next in
    let proposed = (args.config as? GreetingConfig)?.greeting ?? "?"
    if proposed == "rude" {
      say("update to \(proposed) vetoed")
    } else {
      try await next()
    }
  }
  try await guarded.update(GreetingConfig(greeting: "rude"))
  try await guarded.update(GreetingConfig(greeting: "polite"))
  try await guarded.dispose()
}

@CordisActor
func main() async throws {
  let root = Context()
  try root.logger.exporter(ClosureExporter(level: .error) { message in say("error log: \(message.text)") })
  let weather = try await services(root)
  try await realmsAndContexts(root)
  try await functionPlugins(root)
  try await logging(root)
  try await loader(root)
  try await effects(root)
  try await errorsAndAborts(root)
  try await scopedEvents(root)
  try await customExportersAndLoggerState(root)
  try await catalogs(root)
  say("== withdrawal")
  try await weather.dispose()
  say("weather \(weather.state)")
  try await reflection(root)
}

try await main()
