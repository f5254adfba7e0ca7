import Testing
@testable import Cordis

struct Span: Codable, Sendable {
    var low: Int
    var high: Int
}

@CordisActor @Plugin
final class SpanPlugin {
    typealias Config = Span

    static func validate(_ config: Span) throws {
        var issues: [ValidationIssue] = []
        if config.low < 0 { issues.append(ValidationIssue(message: "must not be negative", path: ["low"])) }
        if config.high < config.low { issues.append(ValidationIssue(message: "high is below low")) }
        if !issues.isEmpty { throw ValidationError(issues: issues) }
    }
}

/// An event of cordis-ios's form for these tests.
enum Ping: EventKey {
    typealias Args = Int
    typealias Result = Int
    static let name = "test/ping"
}

struct PingFailed: Error, CustomStringConvertible {
    var index: Int
    var description: String { "ping \(index) failed" }
}

enum AnnouncerKey: ServiceKey {
    typealias Value = Announcer
    static let name = "announcer"
}

@CordisActor @Service(AnnouncerKey.self)
final class Announcer {
    func announce(_ value: Int) throws {
        try ctx.emit(scope: eventScope, Ping.self, value)
    }
}

@CordisActor @Plugin
final class InjectingInCordisIOSForm {
    static let injections = [Injection(BarKey.self), Injection(FooKey.self, config: FooIntercept.Config(tag: "typed"))]
    static let tags = Trail()

    func apply(_ scope: EffectScope) async throws {
        Self.tags.add(ctx.interceptConfig(FooIntercept.self)?.tag ?? "none")
    }
}

@CordisActor @Plugin
final class InjectOnlyInCordisIOSForm {
    static let inject: [any ServiceKey.Type] = [BarKey.self]
}

enum FooIntercept: InterceptKey {
    struct Config: Sendable { var tag: String }
    static let name = "foo"
}

/// An `EventScope` admitting nothing but the context it names.
struct OnlyContext: EventScope {
    let ctx: Context
    func filter(_ hookContext: Context) -> Bool { hookContext === ctx }
}

/// cordis-ios's errors (`ValidationError`, `AggregateError`, its codes, `EffectAbortedError`) and events
/// (`scope:`, waterfalls and core events by key), beside this package's own.
@Suite("cordis-ios errors and events", .timeLimit(.minutes(1))) @CordisActor
struct CordisIOSErrorsAndEventsTests {
    @Test func aValidationErrorFromValidateIsAnInvalidConfigWithOneLinePerIssue() async throws {
        let (root, _) = try makeRoot()
        let error = #expect(throws: CordisError.self) { try root.plugin(SpanPlugin.self, config: Span(low: -1, high: -2)) }
        #expect(error?.code == .invalidConfig)
        #expect(error?.message == "plugin \"SpanPlugin\": invalid config:\n  - must not be negative (at low)\n  - high is below low")
    }

    @Test func theLoaderReportsAValidationErrorWithTheEntryAndTheSameLines() async throws {
        let (root, _) = try makeRoot()
        var catalog = PluginCatalog()
        catalog.register(SpanPlugin.self, as: "span")
        let loader = Loader(ctx: root, catalog: catalog, store: InMemoryEntryStore())
        try await loader.start()
        let error = await #expect(throws: LoaderError.self) {
            try await loader.add(Entry(id: "s", plugin: "span", config: ["low": 3, "high": 1]))
        }
        #expect(error?.code == .invalidConfig)
        #expect("\(error.map { "\($0)" } ?? "")" == "entry \"s\": plugin \"SpanPlugin\": invalid config:\n  - high is below low")
        #expect(loader.entries.isEmpty)
        await loader.stop()
    }

    @Test func parallelByKeyThrowsAnAggregateErrorForOneFailureAndForSeveral() async throws {
        let (root, _) = try makeRoot()
        let finished = Counter()
        try root.on(Ping.self) { _ in throw PingFailed(index: 1) }
        try root.on(Ping.self) { _ in
            await Task.yield()
            finished.hit()
        }
        let one = await #expect(throws: AggregateError.self) { try await root.parallel(Ping.self, 0) }
        #expect(one?.errors.map { "\($0)" } == ["ping 1 failed"])
        #expect(finished.value == 1)
        try root.on(Ping.self) { _ in throw PingFailed(index: 3) }
        let two = await #expect(throws: AggregateError.self) { try await root.parallel(Ping.self, 0) }
        #expect(two?.errors.map { "\($0)" } == ["ping 1 failed", "ping 3 failed"])
        #expect("\(two.map { "\($0)" } ?? "")" == "AggregateError: ping 1 failed; ping 3 failed")
        #expect(finished.value == 2)
    }

    @Test func cordisIOSCodeNamesCompareEqualToTheCodesThrown() async throws {
        let (root, _) = try makeRoot()
        let missing = #expect(throws: CordisError.self) { _ = try root[FooKey.self] }
        #expect(missing?.code == .missingInject)
        let fiber = try root.plugin(FunctionPlugin<NoConfig>(name: "gone") { _, _, _ in })
        try await fiber.await()
        let context = fiber.ctx
        try await fiber.dispose()
        let inactive = #expect(throws: CordisError.self) { try context.effect("late", sync: { nil }) }
        #expect(inactive?.code == .inactiveEffect)
        #expect(CordisError.Code.nextCalledMultipleTimes == .nextCalledMultipleTimes)
        #expect(CordisError.Code.propertyTypeMismatch == .typeMismatch)
        #expect(CordisError.Code.invalidPlugin != .invalidEffect)
    }

    @Test func anApplyEndingWithEffectAbortedErrorLeavesTheFiberActiveWithWhatItCollected() async throws {
        let (root, logs) = try makeRoot()
        let trail = Trail()
        let fiber = try root.plugin(FunctionPlugin<NoConfig>(name: "aborting") { _, _, scope in
            try scope.collect { trail.add("reverted") }
            throw EffectAbortedError()
        })
        try await fiber.await()
        #expect(fiber.state == .active)
        #expect(logs.at(.error).isEmpty)
        try await fiber.dispose()
        #expect(trail.entries == ["reverted"])
    }

    /// cordis-ios's `handle.dispose()` throws: every disposer runs, newest first, then the first error
    /// is rethrown (each is logged here too); a second dispose does nothing.
    @Test func disposingAHandleRunsEveryDisposerThenRethrowsTheFirstError() async throws {
        struct Refused: Error, Equatable { let which: Int }
        let (root, logs) = try makeRoot()
        let trail = Trail()
        let handle = try root.effect("two", scoped: { scope in
            try scope.collect { trail.add("older"); throw Refused(which: 1) }
            try scope.collect { trail.add("newer"); throw Refused(which: 2) }
        })
        await #expect(throws: Refused(which: 2)) { try await handle.dispose() }
        #expect(trail.entries == ["newer", "older"])
        #expect(logs.at(.error).count == 2)
        try await handle.dispose()
        #expect(trail.entries == ["newer", "older"])
    }

    @Test func anAsyncEffectRevertedWhileItRunsWaitsForItAndRunsItsLateDisposer() async throws {
        let (root, logs) = try makeRoot()
        let gate = Gate()
        let trail = Trail()
        let handle = try root.effect("slow") { scope in
            await gate.pass()
            trail.add("resumed")
            try scope.collect { trail.add("late disposer") }
            trail.add("not reached")
        }
        await gate.reached()
        let disposing = Task { @CordisActor in try? await handle.dispose() }
        // The dispose waits for the body: nothing is reverted while it is blocked at the gate.
        await Task.yield()
        #expect(trail.entries.isEmpty)
        gate.open()
        await disposing.value
        try await handle.ready()
        #expect(trail.entries == ["resumed", "late disposer"])
        #expect(logs.at(.error).isEmpty)
    }

    @Test func aSynchronousEffectEndingWithEffectAbortedErrorKeepsWhatItCollected() async throws {
        let (root, _) = try makeRoot()
        let trail = Trail()
        let handle = try root.effect("sync", scoped: { scope in
            try scope.collect { trail.add("reverted") }
            throw EffectAbortedError()
        })
        #expect(!handle.isDisposed)
        try await handle.dispose()
        #expect(trail.entries == ["reverted"])
    }

    @Test func collectingAHandleMovesItUnderTheScopeAndRevertsItWithIt() async throws {
        let (root, _) = try makeRoot()
        let heard = Counter()
        let effect = try root.effect("owner", scoped: { scope in
            let listener = try root.on(Ping.self) { _ in heard.hit() }
            try scope.collect(listener)
        })
        #expect(root.fiber.getEffects().first { $0.label == "owner" }?.children.map(\.label) == ["ctx.on(\"test/ping\")"])
        #expect(!root.fiber.getEffects().contains { $0.label == "ctx.on(\"test/ping\")" })
        try root.emit(Ping.self, 1)
        try await effect.dispose()
        try root.emit(Ping.self, 2)
        #expect(heard.value == 1)
    }

    @Test func aScopedEmissionReachesOnlyTheListenersItsScopeAdmitsAndGlobalOnes() async throws {
        let (root, _) = try makeRoot()
        let trail = Trail()
        let isolated = root.isolate("foo")
        try isolated.on(Ping.self) { trail.add("isolated \($0)") }
        try root.on(Ping.self) { trail.add("root \($0)") }
        try root.on(Ping.self, options: EventOptions(global: true)) { trail.add("global \($0)") }
        try root.emit(scope: IsolationScope(ctx: isolated, name: "foo"), Ping.self, 1)
        try root.emit(scope: OnlyContext(ctx: root), Ping.self, 2)
        #expect(try await root.serial(scope: IsolationScope(ctx: root, name: "foo"), Ping.self, 3) == nil)
        #expect(trail.entries == ["isolated 1", "global 1", "root 2", "global 2", "root 3", "global 3"])
    }

    @Test func aWaterfallByKeyRunsAsAnOnionAndRefusesASecondNext() async throws {
        let (root, _) = try makeRoot()
        try root.on(Ping.self) { value, next in try await next() * 10 + value }
        try root.on(Ping.self) { value, next in try await next() + value }
        #expect(try await root.waterfall(Ping.self, 2) { 1 } == 32)
        let stopper = try root.on(Ping.self, options: EventOptions(prepend: true)) { value, _ in value }
        #expect(try await root.waterfall(Ping.self, 7) { 1 } == 7)
        try await stopper.dispose()
        try root.on(Ping.self) { _, next in
            _ = try await next()
            return try await next()
        }
        let error = await #expect(throws: CordisError.self) { try await root.waterfall(Ping.self, 1) { 1 } }
        #expect(error?.code == .nextCalledMultipleTimes)
        #expect(error?.message == "next() called multiple times")
    }

    @Test func coreEventsByKeyReachTheirListeners() async throws {
        let (root, _) = try makeRoot()
        let trail = Trail()
        try root.on(PluginEvent.self) { trail.add("plugin \($0.name) \($0.state)") }
        try root.on(StatusEvent.self) { trail.add("status \($0.fiber.name) \($0.oldState) -> \($0.fiber.state)") }
        try root.on(ServiceEvent.self) { args in
            trail.add("service \(args.name) \((args.value as? Box)?.value.description ?? "none")")
        }
        let fiber = try root.plugin(FunctionPlugin<NoConfig>(name: "p") { _, _, scope in try scope.ctx.provide(FooKey.self, Box(5)) })
        try await fiber.await()
        try await fiber.dispose()
        #expect(trail.entries == [
            "plugin p pending", "status p pending -> loading", "service foo 5", "status p loading -> active",
            "service foo none", "status p active -> unloading", "status p unloading -> disposed", "plugin p disposed",
        ])
    }

    @Test func resolveGivesARegisteredPluginAsAValueThatStarts() async throws {
        let (root, _) = try makeRoot()
        var catalog = PluginCatalog()
        catalog.register(SpanPlugin.self, as: "span")
        catalog.register(FunctionPlugin<NoConfig>(name: "closure") { _, _, _ in }, as: "closure")
        #expect(catalog.resolve("missing") == nil)
        let span = try #require(catalog.resolve("span"))
        #expect(span.name == "SpanPlugin")
        let fiber = try root.plugin(span, rawConfig: ["low": 1, "high": 2] as JSONValue)
        try await fiber.await()
        #expect(fiber.state == .active)
        let closure = try #require(catalog.resolve("closure"))
        let other = try root.plugin(closure, rawConfig: nil)
        try await other.await()
        #expect(other.state == .active)
        #expect(throws: CordisError.self) { try root.plugin(closure, rawConfig: Span(low: 0, high: 0)) }
    }

    @Test func aFunctionPluginsInjectionsCarryTheirInterceptConfigsAndGateIt() async throws {
        let (root, _) = try makeRoot()
        let trail = Trail()
        let plugin = FunctionPlugin<NoConfig>(
            name: "configured", inject: [BarKey.self], injections: [Injection(FooKey.self, config: FooIntercept.Config(tag: "x"))]
        ) { ctx, _, _ in
            trail.add("tag \(ctx.interceptConfig(FooIntercept.self)?.tag ?? "none")")
        }
        #expect(plugin.dependencies.map(\.name) == ["bar", "foo"])
        let fiber = try root.plugin(plugin)
        try root.provide(FooKey.self, Box(1))
        await root.settled()
        #expect(fiber.state == .pending)
        try root.provide(BarKey.self, Box(2))
        try await fiber.await()
        #expect(fiber.state == .active)
        #expect(trail.entries == ["tag x"])
    }

    @Test func anUpdateEventListenerThatDoesNotCallNextVetoesTheUpdate() async throws {
        let (root, _) = try makeRoot()
        let trail = Trail()
        // The plugin listens to its own updates from `apply`, so its listener lives through each restart.
        let guarded = FunctionPlugin<PositiveConfig>(name: "guarded") { ctx, _, _ in
            try ctx.on(UpdateEvent.self) { args, next in
                let count = (args.config as? PositiveConfig)?.count ?? 0
                trail.add("own \(count) noSave \(args.noSave)")
                if count < 10 { try await next() }
            }
        }
        let fiber = try root.plugin(guarded, config: PositiveConfig(count: 1))
        try await fiber.await()
        try root.on(UpdateEvent.self) { _, next in
            trail.add("root, not global")
            try await next()
        }
        try root.on(UpdateEvent.self, options: EventOptions(global: true)) { args, next in
            trail.add("global \(args.fiber === fiber)")
            try await next()
        }
        try await fiber.update(PositiveConfig(count: 2), noSave: true)
        #expect((fiber.config as? PositiveConfig)?.count == 2)
        try await fiber.update(PositiveConfig(count: 20))
        #expect((fiber.config as? PositiveConfig)?.count == 2)
        #expect(fiber.state == .active)
        #expect(trail.entries == ["own 2 noSave true", "global true", "global true", "own 20 noSave false"])
    }

    @Test func aServicesEventScopeReachesTheListenersInItsRealmOnly() async throws {
        let (root, _) = try makeRoot()
        let trail = Trail()
        let realm = root.isolate("announcer")
        let service = try realm.plugin(Announcer.self)
        try await service.await()
        try realm.on(Ping.self) { trail.add("same realm \($0)") }
        try root.on(Ping.self) { trail.add("root realm \($0)") }
        try root.on(Ping.self, options: EventOptions(global: true)) { trail.add("global \($0)") }
        try #require(service.plugin as? Announcer).announce(1)
        #expect(trail.entries == ["same realm 1", "global 1"])
    }

    @Test func aPluginTypesInjectAndInjectionsGateItAndCarryTheirConfigs() async throws {
        let (root, _) = try makeRoot()
        let fiber = try root.plugin(InjectingInCordisIOSForm.self)
        #expect(fiber.declaredDependencies.map(\.name) == ["bar", "foo"])
        try root.provide(BarKey.self, Box(1))
        await root.settled()
        #expect(fiber.state == .pending)
        try root.provide(FooKey.self, Box(2))
        try await fiber.await()
        #expect(fiber.state == .active)
        #expect(InjectingInCordisIOSForm.tags.entries == ["typed"])
        // `inject` alone is the list when `injections` is not declared (cordis-ios's default).
        let plain = try root.plugin(InjectOnlyInCordisIOSForm.self)
        try await plain.await()
        #expect(plain.declaredDependencies.map(\.name) == ["bar"])
        #expect(plain.state == .active)
    }

    @Test func boxHoldsAValueClosuresShare() async throws {
        let box = Cordis.Box(1)
        let bump = { @CordisActor in box.value += 1 }
        bump()
        #expect(box.value == 2)
    }
}
