import Testing
@testable import Cordis

/// A config cordis-ios's `validate` refuses below 1.
struct PositiveConfig: Codable, Sendable {
    var count: Int
}

struct NotPositive: Error, CustomStringConvertible {
    var description: String { "count must be at least 1" }
}

@CordisActor @Plugin
final class ValidatedPlugin {
    typealias Config = PositiveConfig

    static func validate(_ config: PositiveConfig) throws {
        if config.count < 1 { throw NotPositive() }
    }

    func apply(_ scope: EffectScope) async throws {}
}

@CordisActor @Plugin
final class NoConfigPlugin {
    typealias Config = NoConfig
}

/// cordis-ios's spellings of the context API, beside this package's own: they compile and behave as
/// cordis-ios documents.
@Suite("cordis-ios spellings", .timeLimit(.minutes(1))) @CordisActor
struct CordisIOSSpellingTests {
    @Test func theSubscriptReadsAnInjectedServiceLikeGet() async throws {
        let (root, _) = try makeRoot()
        try root.provide(FooKey.self, Box(7))
        let values = Trail()
        try root.inject([FooKey.self]) { ctx, scope in
            values.add("\(try ctx[FooKey.self].value) \(scope.ctx === ctx)")
        }
        await root.settled()
        #expect(values.entries == ["7 true"])
        #expect(try root[FooKey.self].value == 7)
        let stranger = try root.plugin(FunctionPlugin<NoConfig>(name: "stranger") { _, _, _ in })
        try await stranger.await()
        #expect(throws: CordisError(.serviceUnavailable, "cannot get property \"bar\" without inject")) {
            try stranger.ctx[BarKey.self]
        }
    }

    @Test func getWithStrictSkipsTheInjectChecksAndStrictHidesUnavailableProviders() async throws {
        let (root, _) = try makeRoot()
        let gate = Gate()
        let provider = try root.plugin(FunctionPlugin<NoConfig>(name: "provider") { _, _, scope in
            try scope.ctx.provide(FooKey.self, Box(1))
            await gate.pass()
        })
        await gate.reached()
        // Registered but its fiber is still loading: only a non-strict read sees it.
        #expect(root.get(FooKey.self, strict: true) == nil)
        #expect(root.get(FooKey.self, strict: false)?.value == 1)
        gate.open()
        try await provider.await()
        let stranger = try root.plugin(FunctionPlugin<NoConfig>(name: "stranger") { _, _, _ in })
        try await stranger.await()
        #expect(stranger.ctx.get(FooKey.self, strict: true)?.value == 1)
        #expect(root.get(BarKey.self, strict: false) == nil)
    }

    @Test func setReplacesTheValueOfAServiceTheFiberProvides() async throws {
        let (root, _) = try makeRoot()
        let provider = try root.plugin(FunctionPlugin<NoConfig>(name: "provider") { _, _, scope in
            try scope.ctx.provide(FooKey.self, Box(1))
        })
        try await provider.await()
        try provider.ctx.set(FooKey.self, Box(2))
        #expect(try root[FooKey.self].value == 2)
        #expect(throws: CordisError(
            .serviceUnavailable, "cannot set property \"bar\" without provide")
        ) {
            let other = try root.plugin(FunctionPlugin<NoConfig>() { _, _, _ in })
            try other.ctx.set(BarKey.self, Box(3))
        }
    }

    @Test func theThreeEffectFormsAreRevertedWithTheFiber() async throws {
        let (root, _) = try makeRoot()
        let trail = Trail()
        let body = Gate()
        var asyncHandle: EffectHandle?
        let fiber = try root.plugin(FunctionPlugin<NoConfig>(name: "effects") { _, _, scope in
            let ctx = scope.ctx
            try ctx.effect("sync", sync: {
                trail.add("sync on")
                return { trail.add("sync off") }
            })
            try ctx.effect("scoped", scoped: { scope in
                trail.add("scoped on")
                try scope.collect { trail.add("scoped off") }
            })
            asyncHandle = try ctx.effect("async") { scope in
                await body.pass()
                trail.add("async on")
                try scope.collect { trail.add("async off") }
            }
        })
        try await fiber.await()
        #expect(fiber.effects.map(\.label) == ["sync", "scoped", "async"])
        body.open()
        try await asyncHandle?.ready()
        #expect(trail.entries == ["sync on", "scoped on", "async on"])
        try await fiber.dispose()
        #expect(trail.entries.suffix(3) == ["async off", "scoped off", "sync off"])
    }

    @Test func aScopedEffectThatThrowsRevertsWhatItCollected() async throws {
        let (root, _) = try makeRoot()
        let trail = Trail()
        #expect(throws: SetupFailed.self) {
            try root.effect("failing", scoped: { scope in
                try scope.collect { trail.add("reverted") }
                throw SetupFailed()
            })
        }
        #expect(await eventually { trail.entries == ["reverted"] })
    }

    @Test func realmsInCordisIOSSpelling() async throws {
        let (root, _) = try makeRoot()
        #expect(root.realm(of: "foo") == nil)
        let realm = root.makeRealm(name: "foo")
        let left = root.isolate("foo", realm: realm)
        let right = root.isolate(FooKey.self, realm: realm)
        #expect(left.realm(of: "foo") == realm)
        #expect(right.realm(of: "foo") == realm)
        #expect(root.isolate(FooKey.self).realm(of: "foo") != realm)
        try left.provide(FooKey.self, Box(5))
        #expect(try right[FooKey.self].value == 5)
        #expect(root.get(FooKey.self, strict: false) == nil)
        #expect(realm.id > 0 && root.makeRealm(name: "bar").id > realm.id)
        #expect(realm.name == "foo" && Realm.root.name == "root" && Realm.root.id == 0)
        #expect(Realm.label("team").name == "team" && Realm.label("team").id == 0)
    }

    @Test func getWithoutStrictReadsAServiceThePluginDoesNotInjectWhereAnOptionalIsExpected() async throws {
        let (root, _) = try makeRoot()
        let provider = try root.plugin(FunctionPlugin<NoConfig>(name: "provider") { _, _, scope in try scope.ctx.provide(BarKey.self, Box(4)) })
        try await provider.await()
        let read = Trail()
        let reader = try root.plugin(FunctionPlugin<NoConfig>(name: "reader") { _, _, scope in
            // cordis-ios's forms: get(_:strict:) with its default, wherever an optional is expected.
            if let bar = scope.ctx.get(BarKey.self) { read.add("if let \(bar.value)") }
            guard let bar = scope.ctx.get(BarKey.self) else { return }
            read.add("guard let \(bar.value)")
            read.add("chained \(scope.ctx.get(BarKey.self)?.value ?? 0)")
            read.add("unprovided \(scope.ctx.get(QuxKey.self) == nil)")
            // This package's throwing get keeps its inject check.
            do { _ = try scope.ctx[BarKey.self] as Box } catch { read.add("\(error)") }
        })
        try await reader.await()
        #expect(read.entries == [
            "if let 4", "guard let 4", "chained 4", "unprovided true",
            "cannot get property \"bar\" without inject",
        ])
    }

    @Test func aLoaderErrorNamedInACatchClauseMatchesThatRefusal() async throws {
        let (root, _) = try makeRoot()
        let loader = Loader(ctx: root, catalog: PluginCatalog(), store: InMemoryEntryStore())
        try await loader.start()
        let caught = Trail()
        do {
            try await loader.remove(id: "ghost")
        } catch LoaderError.unknownEntry("other") {
            caught.add("other")
        } catch LoaderError.unknownEntry("ghost") {
            caught.add("ghost")
        }
        #expect(caught.entries == ["ghost"])
        #expect(LoaderError.unknownEntry("ghost").entryID == "ghost")
        await loader.stop()
    }

    /// cordis-ios's `LoaderError` is an enum whose case carries the id: a pattern binds it, and the other
    /// refusals are `.refused`, with the same `code`, `entryID` and `message`.
    @Test func anUnknownEntryBindsItsIDInACasePattern() async throws {
        let (root, _) = try makeRoot()
        let loader = Loader(ctx: root, catalog: PluginCatalog(), store: InMemoryEntryStore())
        try await loader.start()
        var bound: String?
        do {
            try await loader.setDisabled(id: "ghost", true)
        } catch let error as LoaderError {
            if case .unknownEntry(let id) = error { bound = id }
            #expect(error.code == .unknownEntry)
            #expect(error.message == "unknown entry \"ghost\"")
        }
        #expect(bound == "ghost")
        let refusal = await #expect(throws: LoaderError.self) {
            try await loader.add(Entry(id: "x", plugin: "missing"))
        }
        guard case .refused(let detail)? = refusal else {
            Issue.record("expected a refusal, got \(String(describing: refusal))")
            return
        }
        #expect(detail.code == .unknownPlugin)
        #expect(refusal?.entryID == "x")
        await loader.stop()
    }

    @Test func validateIsCalledWhereverAConfigIsGiven() async throws {
        let (root, _) = try makeRoot()
        #expect(throws: CordisError(.invalidConfig, "plugin \"ValidatedPlugin\": invalid config: count must be at least 1")) {
            try root.plugin(ValidatedPlugin.self, config: PositiveConfig(count: 0))
        }
        #expect(throws: CordisError(.invalidConfig, "plugin \"ValidatedPlugin\": invalid config: count must be at least 1")) {
            try root.plugin(PluginType(ValidatedPlugin.self), rawConfig: ["count": 0] as JSONValue)
        }
        let fiber = try root.plugin(ValidatedPlugin.self, config: PositiveConfig(count: 2))
        try await fiber.await()
        await #expect(throws: CordisError.self) { try await fiber.update(PositiveConfig(count: -1)) }
        #expect((fiber.config as? PositiveConfig)?.count == 2)

        var catalog = PluginCatalog()
        catalog.register(ValidatedPlugin.self, as: "validated")
        let loader = Loader(ctx: root, catalog: catalog, store: InMemoryEntryStore())
        try await loader.start()
        await #expect(throws: LoaderError(
            .invalidConfig, entryID: "v",
            "entry \"v\": plugin \"ValidatedPlugin\": invalid config: count must be at least 1")
        ) {
            try await loader.add(Entry(id: "v", plugin: "validated", config: ["count": 0]))
        }
        #expect(loader.entries.isEmpty)
        _ = try root.plugin(NoConfigPlugin.self, config: NoConfig())
    }

    @Test func aLoggersExporterIsAnEffectOfItsContextsFiber() async throws {
        let (root, _) = try makeRoot()
        let captured = CapturedLogs(level: .info)
        let fiber = try root.plugin(FunctionPlugin<NoConfig>(name: "exporting") { _, _, scope in
            try scope.ctx.logger.exporter(captured)
            scope.ctx.logger.info("while loaded")
        })
        try await fiber.await()
        #expect(fiber.effects.map(\.label) == ["ctx.logger.exporter()"])
        try await fiber.dispose()
        root.logger.info("after")
        #expect(captured.all.map(\.text) == ["while loaded"])
        #expect(throws: CordisError.self) {
            try Logger(name: "free", hub: LogHub(recentLevel: .debug)).exporter(captured)
        }
    }
}
