import Testing
@testable import Cordis

enum CycleClockKey: ServiceKey {
    typealias Value = CycleClock
    static let name = "clock"
}

enum CycleGreeterKey: ServiceKey {
    typealias Value = CycleGreeter
    static let name = "greeter"
}

/// A clock service that injects the greeter…
@CordisActor @Service(CycleClockKey.self)
final class CycleClock {
    @Inject(CycleGreeterKey.self) var greeter: CycleGreeter
}

/// …and a greeter service that injects the clock: together, a cycle.
@CordisActor @Service(CycleGreeterKey.self)
final class CycleGreeter {
    @Inject(CycleClockKey.self) var clock: CycleClock
}

/// A plugin that only consumes the clock.
@CordisActor @Plugin
final class CycleClockReader {
    @Inject(CycleClockKey.self) var clock: CycleClock
}

/// Service dependency cycles (cordis PR 66): found when they form, named in the pending reason.
@Suite("Dependency cycles", .timeLimit(.minutes(1))) @CordisActor
struct DependencyCycleTests {
    @Test func aCycleIsNamedInThePendingReasonOfEveryFiberInItAndIsLoggedWhenItForms() async throws {
        let (root, logs) = try makeRoot()
        let clock = try root.plugin(CycleClock.self)
        await root.settled()
        #expect(clock.state == .pending)
        #expect(clock.dependencyCycle == nil)
        #expect(clock.pendingReason == "waits for greeter")

        let greeter = try root.plugin(CycleGreeter.self)
        let reader = try root.plugin(CycleClockReader.self)
        await root.settled()
        #expect(greeter.state == .pending)
        #expect(clock.dependencyCycle == ["greeter", "clock", "greeter"])
        #expect(greeter.dependencyCycle == ["clock", "greeter", "clock"])
        #expect(clock.pendingReason == "waits for greeter → clock → greeter")
        #expect(greeter.pendingReason == "waits for clock → greeter → clock")
        // A consumer outside the cycle waits for it too, and is told so.
        #expect(reader.pendingReason == "waits for clock → greeter → clock")
        let warnings = logs.at(.warn).map(\.text)
        #expect(warnings.first == "plugin greeter waits for a dependency cycle: clock → greeter → clock; "
            + "none of its fibers can load until one of them stops injecting the next")
        #expect(warnings.filter { $0.contains("dependency cycle") }.count == 2)

        // Breaking the cycle: the clock waits for a plain missing service again.
        try await greeter.dispose()
        #expect(clock.dependencyCycle == nil)
        #expect(clock.pendingReason == "waits for greeter")
        #expect(reader.pendingReason == "waits for clock")
        // The disposed fiber's logged cycle is forgotten with it.
        #expect(greeter.world.reportedCycles[greeter.id] == nil)
    }

    @Test func aCycleFoundOnlyAcrossRealmsIsNoCycle() async throws {
        let (root, _) = try makeRoot()
        let clock = try root.plugin(CycleClock.self)
        // This greeter's clock resolves in a realm of its own, where nothing declares a clock.
        let greeter = try root.isolate("clock").plugin(CycleGreeter.self)
        await root.settled()
        #expect(clock.dependencyCycle == nil)
        #expect(greeter.dependencyCycle == nil)
        #expect(clock.pendingReason == "waits for greeter")
        #expect(greeter.pendingReason == "waits for clock")
    }

    @Test func aFiberThatIsNotPendingHasNoReason() async throws {
        let (root, _) = try makeRoot()
        let fiber = try root.plugin(FunctionPlugin<NoConfig>(name: "plain") { _, _, _ in })
        try await fiber.await()
        #expect(fiber.pendingReason == nil)
        #expect(fiber.dependencyCycle == nil)
    }

    @Test func theLoadersEntryStatusShowsTheCycle() async throws {
        let (root, _) = try makeRoot()
        var catalog = PluginCatalog()
        catalog.register(CycleClock.self, as: "clock")
        catalog.register(CycleGreeter.self, as: "greeter")
        let store = InMemoryEntryStore(EntryTree(entries: [
            Entry(id: "clock", plugin: "clock"), Entry(id: "greeter", plugin: "greeter"),
        ]))
        let loader = Loader(ctx: root, catalog: catalog, store: store)
        try await loader.start()
        #expect(loader.status.map(\.waiting) == [
            "waits for greeter → clock → greeter", "waits for clock → greeter → clock",
        ])
        #expect(loader.status.map(\.state) == [.pending, .pending])
    }
}
