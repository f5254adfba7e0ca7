import Cordis

enum CounterKey: ServiceKey {
  typealias Value = CounterService
  static let name = "counter"
}

@CordisActor @Service(CounterKey.self)
final class CounterService {
  private(set) var value = 0
  func add(_ delta: Int) { value += delta }
}

/// A stand-in for a UI toolbar: what the badges add, they remove.
@CordisActor
final class Toolbar {
  private(set) var badges: [Badge] = []
  func add(_ badge: Badge) { badges.append(badge) }
  func remove(_ badge: Badge) { badges.removeAll { $0 === badge } }
}

@CordisActor
final class Badge {
  let value: Int
  init(value: Int) { self.value = value }
}

@CordisActor let toolbar = Toolbar()

@CordisActor @Plugin
final class CounterBadge {
  @Inject(CounterKey.self) var counter: CounterService

  func apply(_ scope: EffectScope) async throws {
    let badge = Badge(value: try counter.value)
    toolbar.add(badge)
    try scope.collect { toolbar.remove(badge) }
  }
}

@CordisActor
func runCounter() async throws {
  let root = Context()
  let counter = try await root.plugin(CounterService.self).await()
  let badge = try await root.plugin(CounterBadge.self).await()
  print("badge: \(badge.state), toolbar badges: \(toolbar.badges.count)")
  try await counter.dispose()
  print("badge: \(badge.state), toolbar badges: \(toolbar.badges.count)")
}
