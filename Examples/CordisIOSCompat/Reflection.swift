// What a cordis-ios app reads about its plugin world: `ctx.reflect`, `ctx.registry`, `ctx.events`, and a
// fiber's `parent`, `store`, `inertia`, `inject` and `runtime`.
import Cordis

@CordisActor
final class WallClock {
  let hour: Int
  init(hour: Int) { self.hour = hour }
}

enum WallClockKey: ServiceKey {
  typealias Value = WallClock
  static let name = "wall-clock"
}

enum Tick: EventKey {
  typealias Args = Int
  typealias Result = Never
  static let name = "tick"
}

/// Provides the wall clock.
let wallClock = FunctionPlugin<NoConfig>(name: "wall-clock") { ctx, _, _ in
  try ctx.provide(WallClockKey.self, WallClock(hour: 9))
}

/// Reads the wall clock on every tick; its injection carries a config.
let tickReader = FunctionPlugin<NoConfig>(
  name: "tick-reader", injections: [Injection(WallClockKey.self, config: "24h")]
) { ctx, _, _ in
  try ctx.on(Tick.self) { tick in say("tick \(tick) read at \(try ctx[WallClockKey.self].hour)") }
}

@CordisActor
func reflection(_ root: Context) async throws {
  say("== reflect, registry, events, fibers")
  let clock = try await root.plugin(wallClock).await()
  let provided = root.reflect.store.values.filter { $0.name == WallClockKey.name }
  say("reflect: \(WallClockKey.name) by \(provided.map(\.fiber.name)), hour \((provided.first?.value as? WallClock)?.hour ?? 0), in props \(root.reflect.props.contains(WallClockKey.name))")

  let first = try await root.plugin(tickReader).await()
  let second = try root.plugin(tickReader)
  say("inertia while starting: \(second.inertia != nil)")
  while let inertia = second.inertia { await inertia.value }
  say("after inertia: \(second.state), inertia nil \(second.inertia == nil)")

  guard let runtime = root.registry.get(tickReader) else { return say("registry: tick-reader missing") }
  say("registry: \(runtime.name ?? "nil") has \(runtime.fiberList.count) fibers, has \(root.registry.has(tickReader)), first's runtime \(first.runtime?.identity == tickReader.identity), counter is newest uid \(root.registry.counter == second.uid)")
  say("events: \(Tick.name) has \(root.events.snapshot[Tick.name] ?? 0) listeners")
  try root.emit(Tick.self, 1)
  say("fiber: parent is root \(first.parent === root), root fiber's parent is root \(root.fiber.parent === root), root runtime nil \(root.fiber.runtime == nil)")
  say("store: \(first.store?.keys.sorted() ?? []), \(WallClockKey.name) from \(first.store?[WallClockKey.name]?.fiber.name ?? "nowhere")")
  say("inject: \(first.inject.keys.sorted()), config \((first.inject[WallClockKey.name] ?? nil) as? String ?? "none")")

  await root.registry.delete(tickReader)
  say("deleted: listed \(root.registry.has(tickReader)), \(Tick.name) listeners \(root.events.snapshot[Tick.name] ?? 0), first \(first.state), store nil \(first.store == nil)")
  try await clock.dispose()
  say("clock gone: in reflect \(root.reflect.store.values.contains { $0.name == WallClockKey.name }), in props \(root.reflect.props.contains(WallClockKey.name))")
}
