import Testing
@testable import Cordis

enum SetupServiceKey: ServiceKey {
    typealias Value = SetupService
    static let name = "setup-service"
}

/// What the `@Service` classes below did, in order, and the gates their `setup` waits at.
@CordisActor
enum ServicePluginProbe {
    static var trail = Trail()
    static var gate = Gate()
    static var failSetup = false
    static var ready = false

    static func reset() {
        trail = Trail()
        gate = Gate()
        failSetup = false
        ready = false
    }
}

struct SetupFailed: Error {}

/// A service in cordis-ios's form: its start-up in `setup(_:)`, no `apply`.
@CordisActor @Service(SetupServiceKey.self)
final class SetupService {
    private(set) var started = false

    func setup(_ scope: EffectScope) async throws {
        ServicePluginProbe.trail.add("setup begins")
        await ServicePluginProbe.gate.pass()
        if ServicePluginProbe.failSetup { throw SetupFailed() }
        started = true
        try scope.collect { ServicePluginProbe.trail.add("setup reverted") }
        ServicePluginProbe.trail.add("setup returns")
    }
}

enum GatedServiceKey: ServiceKey {
    typealias Value = GatedService
    static let name = "gated-service"
}

/// A service whose availability follows `check()` (cordis-ios's `ServicePlugin.check`).
@CordisActor @Service(GatedServiceKey.self)
final class GatedService {
    func check() -> Bool { ServicePluginProbe.ready }
}

@CordisActor @Plugin
final class SetupServiceConsumer {
    @Inject(SetupServiceKey.self) var service: SetupService

    func apply(_ scope: EffectScope) async throws {
        ServicePluginProbe.trail.add("consumer applies, started: \(try service.started)")
        try scope.collect { ServicePluginProbe.trail.add("consumer reverted") }
    }
}

@CordisActor @Plugin
final class GatedServiceConsumer {
    @Inject(GatedServiceKey.self) var service: GatedService

    func apply(_ scope: EffectScope) async throws {
        _ = try service
        ServicePluginProbe.trail.add("gated consumer applies")
        try scope.collect { ServicePluginProbe.trail.add("gated consumer reverted") }
    }
}

/// cordis-ios's `ServicePlugin`: `setup(_:)` runs after the service is provided, consumers start once
/// it returns, `check()` gates availability, and the plugin is named after its key.
@Suite("Service plugin (setup and check)", .serialized, .timeLimit(.minutes(1))) @CordisActor
struct ServicePluginTests {
    @Test func theServiceIsProvidedWhenItsFiberAppliesAndConsumersStartOnceSetupReturns() async throws {
        ServicePluginProbe.reset()
        let (root, _) = try makeRoot()
        let consumer = try root.plugin(SetupServiceConsumer.self)
        let service = try root.plugin(SetupService.self)
        await ServicePluginProbe.gate.reached(1)
        // Provided (registered in its slot) while setup runs, but not available to consumers yet.
        #expect(service.state == .loading)
        #expect(root.registeredProviders(in: ServiceSlot(name: "setup-service", realm: .root)).count == 1)
        #expect(service.providedSlots == [ServiceSlot(name: "setup-service", realm: .root)])
        #expect(consumer.state == .pending)

        ServicePluginProbe.gate.open()
        try await service.await()
        await root.settled()
        #expect(service.state == .active)
        #expect(consumer.state == .active)
        #expect(ServicePluginProbe.trail.entries == [
            "setup begins", "setup returns", "consumer applies, started: true",
        ])

        try await service.dispose()
        #expect(consumer.state == .pending)
        #expect(ServicePluginProbe.trail.entries.suffix(2) == ["consumer reverted", "setup reverted"])
    }

    @Test func aSetupThatThrowsFailsTheFiberAndWithdrawsTheService() async throws {
        ServicePluginProbe.reset()
        ServicePluginProbe.failSetup = true
        ServicePluginProbe.gate.open()
        let (root, _) = try makeRoot()
        let consumer = try root.plugin(SetupServiceConsumer.self)
        let service = try root.plugin(SetupService.self)
        await #expect(throws: SetupFailed.self) { try await service.await() }
        await root.settled()
        #expect(service.state == .failed)
        #expect(consumer.state == .pending)
        #expect(root.registeredProviders(in: ServiceSlot(name: "setup-service", realm: .root)).isEmpty)
    }

    @Test func consumersStayPendingWhileCheckSaysFalseAndFollowARecheck() async throws {
        ServicePluginProbe.reset()
        let (root, _) = try makeRoot()
        let service = try root.plugin(GatedService.self)
        let consumer = try root.plugin(GatedServiceConsumer.self)
        await root.settled()
        #expect(service.state == .active)
        #expect(consumer.state == .pending)
        #expect(consumer.missingInjections == ["gated-service"])
        #expect(!root.has(GatedServiceKey.self))

        ServicePluginProbe.ready = true
        root.recheck(GatedServiceKey.self)
        await root.settled()
        #expect(consumer.state == .active)

        ServicePluginProbe.ready = false
        root.recheck(GatedServiceKey.self)
        await root.settled()
        #expect(consumer.state == .pending)
        #expect(ServicePluginProbe.trail.entries == ["gated consumer applies", "gated consumer reverted"])
    }

    @Test func aServicePluginIsNamedAfterItsKey() async throws {
        ServicePluginProbe.reset()
        ServicePluginProbe.gate.open()
        let (root, _) = try makeRoot()
        let service = try root.plugin(SetupService.self)
        let gated = try root.plugin(GatedService.self)
        #expect(service.name == "setup-service")
        #expect(gated.name == "gated-service")
        #expect(SetupService.name == SetupServiceKey.name)
        await root.settled()
    }
}
