import Foundation
import Testing
@testable import Cordis

// The cordis-ios product page examples, written as the page writes them (with `print` and `toolbar`
// routed to recorders the tests read).

/// What the examples print.
@CordisActor
enum ExampleOutput {
    static var lines: [String] = []
    static func print(_ line: String) { lines.append(line) }
}

enum ClockKey: ServiceKey {
    typealias Value = ClockService
    static let name = "clock"
}

@CordisActor @Service(ClockKey.self)
final class ClockService {
    func now() -> Date { Date(timeIntervalSince1970: 42) }
}

@CordisActor @Plugin
final class Greeter {
    @Inject(ClockKey.self) var clock: ClockService  // runs only while "clock" is provided

    func apply(_ scope: EffectScope) async throws {
        ExampleOutput.print("hello at \(try clock.now().timeIntervalSince1970)")
        try scope.collect { ExampleOutput.print("bye") }  // undone automatically on unload
    }
}

enum CounterKey: ServiceKey {
    typealias Value = CounterService
    static let name = "counter"
}

@CordisActor @Service(CounterKey.self)
final class CounterService {
    private(set) var value = 0
    func add(_ delta: Int) { value += delta }
}

/// A badge shown in the toolbar.
@CordisActor
final class Badge {
    let value: Int
    init(value: Int) { self.value = value }
}

/// The toolbar the badge plugin contributes to.
@CordisActor
enum Toolbar {
    static var badges: [Badge] = []
    static func add(_ badge: Badge) { badges.append(badge) }
    static func remove(_ badge: Badge) { badges.removeAll { $0 === badge } }
}

@CordisActor @Plugin
final class CounterBadge {
    @Inject(CounterKey.self) var counter: CounterService

    func apply(_ scope: EffectScope) async throws {
        let badge = Badge(value: try counter.value)
        Toolbar.add(badge)
        try scope.collect { Toolbar.remove(badge) }
    }
}

/// The examples on the cordis-ios product page behave as their comments say.
@Suite("Product page examples", .serialized, .timeLimit(.minutes(1))) @CordisActor
struct ExampleTests {
    @Test func theGreeterRunsOnlyWhileAClockIsProvidedAndSaysByeWhenItGoes() async throws {
        ExampleOutput.lines = []
        let (root, _) = try makeRoot()
        let greeter = try root.plugin(Greeter.self)  // pending: no clock yet
        try await greeter.await()
        #expect(greeter.state == .pending)
        #expect(greeter.missingInjections == ["clock"])
        #expect(ExampleOutput.lines.isEmpty)
        let clock = try await root.plugin(ClockService.self).await()
        try await greeter.await()  // active
        #expect(greeter.state == .active)
        #expect(ExampleOutput.lines == ["hello at 42.0"])
        try await clock.dispose()  // greeter unloads ("bye"), back to pending
        #expect(greeter.state == .pending)
        #expect(ExampleOutput.lines == ["hello at 42.0", "bye"])
        try await root.plugin(ClockService.self).await()
        try await greeter.await()
        #expect(ExampleOutput.lines == ["hello at 42.0", "bye", "hello at 42.0"])
    }

    @Test func theCounterBadgeIsShownWhileTheCounterIsProvidedAndRemovedWhenItIsWithdrawn() async throws {
        Toolbar.badges = []
        let (root, _) = try makeRoot()
        let counter = try await root.plugin(CounterService.self).await()
        try root[CounterKey.self].add(3)
        let badge = try root.plugin(CounterBadge.self)
        try await badge.await()
        #expect(Toolbar.badges.map(\.value) == [3])
        try await counter.dispose()  // badge drops to pending; its toolbar badge is gone
        #expect(badge.state == .pending)
        #expect(Toolbar.badges.isEmpty)
        try await root.plugin(CounterService.self).await()
        try await badge.await()
        #expect(Toolbar.badges.map(\.value) == [0])
        try await badge.dispose()
        #expect(Toolbar.badges.isEmpty)
    }

    @Test func theGeneratedInjectListAndServiceDeclarationsMatchTheKeys() {
        #expect(Greeter.injects.map(\.name) == ["clock"])
        #expect(CounterBadge.injects.map(\.name) == ["counter"])
        #expect(ClockService.provides == ["clock"])
        #expect(Greeter.name == "Greeter")
    }
}
