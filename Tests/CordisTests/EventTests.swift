import Testing
@testable import Cordis

/// cordis `events.spec.ts` (describe `Events`). cordis's `Session`/`Filter` objects become
/// service-scoped emissions: a listener receives them only if it resolves the service in the emitter's realm.
@Suite("Events", .timeLimit(.minutes(1))) @CordisActor
struct EventTests {
    struct ListenerError: Error, Equatable { var message = "test" }

    static let answer = Event<Void, String?>("custom-event")
    static let waterfall = WaterfallEvent<Int, Int>("test/waterfall")

    @Test func onCallsTheListenerForEveryEmitUntilItsHandleIsDisposed() async throws {
        let (root, _) = try makeRoot()
        let calls = Counter()
        let handle = try root.on(customEvent) { calls.hit() }
        try root.emit(customEvent, ())
        #expect(calls.value == 1)
        try root.emit(customEvent, ())
        #expect(calls.value == 2)
        try await handle.dispose()
        try root.emit(customEvent, ())
        #expect(calls.value == 2)
        #expect(root.listenerCounts["custom-event"] == nil)
    }

    /// An emission reaches the listeners registered when it began: one a listener adds waits for the next
    /// emission, and one a listener removes still hears this one.
    @Test func anEmissionReachesTheListenersRegisteredWhenItBegan() async throws {
        let (root, _) = try makeRoot()
        let trail = Trail()
        var added: EffectHandle?
        var leaving: EventBus.Listener?
        try root.on(customEvent) {
            trail.add("first")
            if added == nil { added = try root.on(customEvent) { trail.add("added") } }
            if let listener = leaving {
                root.world.events.remove(customEvent.name, listener)
                leaving = nil
            }
        }
        /// A listener of `event` as the bus holds it.
        func body<P, R>(of event: Event<P, R>, _ listener: @escaping @CordisActor (P) throws -> R) -> Any { listener }
        let third = body(of: customEvent) { trail.add("third") }
        leaving = try root.register(customEvent.name, body: third, isAsync: false, global: false).listener
        try root.emit(customEvent, ())
        #expect(trail.entries == ["first", "third"])
        trail.reset()
        try root.emit(customEvent, ())
        #expect(trail.entries == ["first", "added"])
    }

    @Test func onceCallsTheListenerOnlyOnceAndLeavesNoListenerBehind() async throws {
        let (root, _) = try makeRoot()
        let calls = Counter()
        let before = root.fiber.effects.count
        let handle = try root.once(customEvent) { calls.hit() }
        try root.emit(customEvent, ())
        #expect(calls.value == 1)
        #expect(root.listenerCounts["custom-event"] == nil)
        #expect(root.fiber.effects.count == before)
        try root.emit(customEvent, ())
        #expect(calls.value == 1)
        try await handle.dispose()
        try root.emit(customEvent, ())
        #expect(calls.value == 1)
    }

    /// Three contexts: `inRealm` and `sameRealm` resolve `foo` in the shared realm `a`, `otherRealm` in `b`.
    func realms(_ root: Context) -> (inRealm: Context, sameRealm: Context, otherRealm: Context) {
        (root.isolate("foo", realm: .label("a")), root.isolate("foo", realm: .label("a")), root.isolate("foo", realm: .label("b")))
    }

    @Test func emitReachesEveryListenerAndServiceScopedEmitsOnlyTheSameRealm() async throws {
        let (root, _) = try makeRoot()
        try root.emit(customEvent, ())
        let (inRealm, sameRealm, otherRealm) = realms(root)
        let calls = Counter()
        try inRealm.on(customEvent) { calls.hit() }
        try root.emit(customEvent, ())
        #expect(calls.value == 1)
        try otherRealm.emit(customEvent, (), service: FooKey.self)
        #expect(calls.value == 1)
        try sameRealm.emit(customEvent, (), service: FooKey.self)
        #expect(calls.value == 2)
    }

    @Test func aGlobalListenerReceivesServiceScopedEmitsFromEveryRealm() async throws {
        let (root, _) = try makeRoot()
        let calls = Counter()
        try root.on(customEvent, global: true) { calls.hit() }
        try root.isolate("foo").emit(customEvent, (), service: FooKey.self)
        try root.isolate("foo", realm: .label("b")).emit(customEvent, (), service: FooKey.self)
        #expect(calls.value == 2)
    }

    @Test func emitThrowsTheFirstListenerErrorAndSkipsTheRest() async throws {
        let (root, _) = try makeRoot()
        let calls = Counter()
        try root.on(customEvent) { throw ListenerError() }
        try root.on(customEvent) { calls.hit() }
        #expect(throws: ListenerError()) { try root.emit(customEvent, ()) }
        #expect(calls.value == 0)
    }

    @Test func parallelRunsListenersConcurrentlyAndWaitsForAllOfThem() async throws {
        let (root, _) = try makeRoot()
        try await root.parallel(customEvent, ())
        let (inRealm, sameRealm, otherRealm) = realms(root)
        let gate = Gate()
        let finished = Counter()
        for _ in 0..<2 {
            try inRealm.onAsync(customEvent) {
                await gate.pass()
                finished.hit()
            }
        }
        let running = Task { @CordisActor in try await root.parallel(customEvent, ()) }
        await gate.reached(2)
        #expect(finished.value == 0)
        gate.open()
        try await running.value
        #expect(finished.value == 2)
        try await otherRealm.parallel(customEvent, (), service: FooKey.self)
        #expect(finished.value == 2)
        try await sameRealm.parallel(customEvent, (), service: FooKey.self)
        #expect(finished.value == 4)
    }

    @Test func parallelRethrowsAListenerErrorAfterTheOthersFinish() async throws {
        let (root, _) = try makeRoot()
        let calls = Counter()
        try root.onAsync(customEvent) { throw ListenerError() }
        try root.onAsync(customEvent) { calls.hit() }
        await #expect(throws: ListenerError()) { try await root.parallel(customEvent, ()) }
        #expect(calls.value == 1)
    }

    @Test func serialAwaitsListenersInOrderAndReturnsTheFirstResult() async throws {
        let (root, _) = try makeRoot()
        #expect(try await root.serial(Self.answer, ()) == nil)
        let trail = Trail()
        let gate = Gate()
        try root.onAsync(Self.answer) { () async -> String? in
            await gate.pass()
            trail.add("first")
            return nil
        }
        try root.on(Self.answer) { () -> String? in
            trail.add("second")
            return "bailed"
        }
        try root.on(Self.answer) { () -> String? in
            trail.add("third")
            return "late"
        }
        let running = Task { @CordisActor in try await root.serial(Self.answer, ()) }
        await gate.reached()
        #expect(trail.entries.isEmpty)
        gate.open()
        #expect(try await running.value == "bailed")
        #expect(trail.entries == ["first", "second"])
    }

    @Test func serialRethrowsAListenerError() async throws {
        let (root, _) = try makeRoot()
        try root.onAsync(Self.answer) { () async throws -> String? in throw ListenerError(message: "message") }
        await #expect(throws: ListenerError(message: "message")) { try await root.serial(Self.answer, ()) }
    }

    @Test func bailCallsListenersInOrderAndStopsAtTheFirstResult() async throws {
        let (root, _) = try makeRoot()
        #expect(try root.bail(Self.answer, ()) == nil)
        let (inRealm, sameRealm, otherRealm) = realms(root)
        let calls = Counter()
        try inRealm.on(Self.answer) { () -> String? in
            calls.hit()
            return nil
        }
        #expect(try root.bail(Self.answer, ()) == nil)
        #expect(calls.value == 1)
        #expect(try otherRealm.bail(Self.answer, (), service: FooKey.self) == nil)
        #expect(calls.value == 1)
        try root.on(Self.answer) { () -> String? in "bailed" }
        try root.on(Self.answer) { () -> String? in
            calls.hit()
            return "late"
        }
        #expect(try sameRealm.bail(Self.answer, ()) == "bailed")
        #expect(calls.value == 2)
    }

    @Test func bailThrowsAListenerError() async throws {
        let (root, _) = try makeRoot()
        try root.on(Self.answer) { () throws -> String? in throw ListenerError(message: "message") }
        #expect(throws: ListenerError(message: "message")) { try root.bail(Self.answer, ()) }
    }

    @Test func waterfallPassesEachListenerANextThatRunsTheRestOfTheChain() async throws {
        let (root, _) = try makeRoot()
        let calls = (Counter(), Counter(), Counter(), Counter())
        try root.on(Self.waterfall) { value, next in
            calls.0.hit()
            return value + (try next())
        }
        try root.on(Self.waterfall) { value, next in
            calls.1.hit()
            return value + (try next())
        }
        #expect(try root.waterfall(Self.waterfall, 1, final: { 2 }) == 4)
        #expect(calls.0.value == 1 && calls.1.value == 1)
        calls.0.reset()
        calls.1.reset()
        try root.on(Self.waterfall) { value, _ in
            calls.2.hit()
            return value
        }
        try root.on(Self.waterfall) { value, next in
            calls.3.hit()
            return value + (try next())
        }
        #expect(try root.waterfall(Self.waterfall, 1, final: { 2 }) == 3)
        #expect(calls.0.value == 1 && calls.1.value == 1 && calls.2.value == 1)
        #expect(calls.3.value == 0)
    }

    @Test func aWaterfallNextCalledTwiceThrows() async throws {
        let (root, _) = try makeRoot()
        try root.on(Self.waterfall) { value, next in
            _ = try next()
            return try next()
        }
        let error = #expect(throws: CordisError.self) { try root.waterfall(Self.waterfall, 1, final: { 2 }) }
        #expect(error?.code == .nextCalledMultipleTimes)
        #expect(error?.message == "next() called multiple times")
    }

    @Test func aPluginsListenersAreEffectsRemovedWhenItUnloads() async throws {
        let (root, _) = try makeRoot()
        let calls = Counter()
        let fiber = try root.plugin(name: "listener") { scope in
            try scope.ctx.on(customEvent) { calls.hit() }
        }
        try await fiber.await()
        #expect(fiber.effects == [EffectMeta(label: "ctx.on(\"custom-event\")")])
        try root.emit(customEvent, ())
        try await fiber.dispose()
        try root.emit(customEvent, ())
        #expect(calls.value == 1)
        #expect(root.listenerCounts["custom-event"] == nil)
    }
}
