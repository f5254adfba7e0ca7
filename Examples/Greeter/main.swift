// The cordis-ios product page's examples, unchanged, on Linux.
import Cordis
import Foundation

enum ClockKey: ServiceKey {
  typealias Value = ClockService
  static let name = "clock"
}

@CordisActor @Service(ClockKey.self)
final class ClockService {
  func now() -> Date { Date() }
}

@CordisActor @Plugin
final class Greeter {
  @Inject(ClockKey.self) var clock: ClockService   // runs only while "clock" is provided

  func apply(_ scope: EffectScope) async throws {
    print("hello at \(try clock.now())")
    try scope.collect { print("bye") }              // undone automatically on unload
  }
}

@CordisActor
func runGreeter() async throws {
  let root = Context()
  let greeter = try root.plugin(Greeter.self)        // pending: no clock yet
  print("greeter: \(greeter.state)")
  let clock = try await root.plugin(ClockService.self).await()
  try await greeter.await()                          // active
  print("greeter: \(greeter.state)")
  try await clock.dispose()                          // greeter unloads ("bye"), back to pending
  print("greeter: \(greeter.state)")
}

try await runGreeter()
try await runCounter()
