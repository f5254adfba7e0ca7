import Testing
@testable import Cordis

/// cordis `events.spec.ts` (describe `Events`). cordis's `Session`/`Filter` objects become
/// service-scoped emissions: a listener receives them only if it resolves the service in the emitter's realm.
@Suite("Events", .timeLimit(.minutes(1))) @CordisActor
struct EventTests {
    struct ListenerError: Error, Equatable { var message = "test" }

    /// `custom-event` with listeners that may answer (bail with a string).
    enum Answer: EventKey {
        typealias Args = Void
        typealias Result = String
        static var name: String { "custom-event" }
    }

    /// A waterfall over integers.
    enum Sum: EventKey {
        typealias Args = Int
        typealias Result = Int
        static var name: String { "test/waterfall" }
    }

    @Test func onCallsTheListenerForEveryEmitUntilItsHandleIsDisposed() async throws {
        let (root, _) = try makeRoot()
        let calls = Counter()
        let handle = try root.on(CustomEvent.self) { calls.hit() }
        try root.emit(CustomEvent.self)
        #expect(calls.value == 1)
        try root.emit(CustomEvent.self)
        #expect(calls.value == 2)
        try await handle.dispose()
        try root.emit(CustomEvent.self)
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
        try root.on(CustomEvent.self) {
            trail.add("first")
            if added == nil { added = try root.on(CustomEvent.self) { trail.add("added") } }
            if let listener = leaving {
                root.world.events.remove(CustomEvent.name, listener)
                leaving = nil
            }
        }
        /// A listener of `custom-event` as the bus holds it.
        let third: @CordisActor (()) throws -> CustomEvent.Result? = { (_: ()) in
            trail.add("third")
            return nil
        }
        leaving = try root.register(CustomEvent.name, body: third, isAsync: false, global: false).listener
        try root.emit(CustomEvent.self)
        #expect(trail.entries == ["first", "third"])
        trail.reset()
        try root.emit(CustomEvent.self)
        #expect(trail.entries == ["first", "added"])
    }

    @Test func onceCallsTheListenerOnlyOnceAndLeavesNoListenerBehind() async throws {
        let (root, _) = try makeRoot()
        let calls = Counter()
        let before = root.fiber.effects.count
        let handle = try root.once(CustomEvent.self) { calls.hit() }
        try root.emit(CustomEvent.self)
        #expect(calls.value == 1)
        #expect(root.listenerCounts["custom-event"] == nil)
        #expect(root.fiber.effects.count == before)
        try root.emit(CustomEvent.self)
        #expect(calls.value == 1)
        try await handle.dispose()
        try root.emit(CustomEvent.self)
        #expect(calls.value == 1)
    }

    /// Three contexts: `inRealm` and `sameRealm` resolve `foo` in the shared realm `a`, `otherRealm` in `b`.
    func realms(_ root: Context) -> (inRealm: Context, sameRealm: Context, otherRealm: Context) {
        (root.isolate("foo", realm: .label("a")), root.isolate("foo", realm: .label("a")), root.isolate("foo", realm: .label("b")))
    }

    @Test func emitReachesEveryListenerAndServiceScopedEmitsOnlyTheSameRealm() async throws {
        let (root, _) = try makeRoot()
        try root.emit(CustomEvent.self)
        let (inRealm, sameRealm, otherRealm) = realms(root)
        let calls = Counter()
        try inRealm.on(CustomEvent.self) { calls.hit() }
        try root.emit(CustomEvent.self)
        #expect(calls.value == 1)
        try otherRealm.emit(scope: IsolationScope(ctx: otherRealm, name: FooKey.name), CustomEvent.self)
        #expect(calls.value == 1)
        try sameRealm.emit(scope: IsolationScope(ctx: sameRealm, name: FooKey.name), CustomEvent.self)
        #expect(calls.value == 2)
    }

    @Test func aGlobalListenerReceivesServiceScopedEmitsFromEveryRealm() async throws {
        let (root, _) = try makeRoot()
        let calls = Counter()
        try root.on(CustomEvent.self, options: EventOptions(global: true)) { calls.hit() }
        for emitter in [root.isolate("foo"), root.isolate("foo", realm: .label("b"))] {
            try emitter.emit(scope: IsolationScope(ctx: emitter, name: FooKey.name), CustomEvent.self)
        }
        #expect(calls.value == 2)
    }

    @Test func emitThrowsTheFirstListenerErrorAndSkipsTheRest() async throws {
        let (root, _) = try makeRoot()
        let calls = Counter()
        try root.on(CustomEvent.self) { throw ListenerError() }
        try root.on(CustomEvent.self) { calls.hit() }
        #expect(throws: ListenerError()) { try root.emit(CustomEvent.self) }
        #expect(calls.value == 0)
    }

    @Test func parallelRunsListenersConcurrentlyAndWaitsForAllOfThem() async throws {
        let (root, _) = try makeRoot()
        try await root.parallel(CustomEvent.self)
        let (inRealm, sameRealm, otherRealm) = realms(root)
        let gate = Gate()
        let finished = Counter()
        for _ in 0..<2 {
            try inRealm.on(CustomEvent.self) {
                await gate.pass()
                finished.hit()
            }
        }
        let running = Task { @CordisActor in try await root.parallel(CustomEvent.self) }
        await gate.reached(2)
        #expect(finished.value == 0)
        gate.open()
        try await running.value
        #expect(finished.value == 2)
        try await otherRealm.parallel(scope: IsolationScope(ctx: otherRealm, name: FooKey.name), CustomEvent.self)
        #expect(finished.value == 2)
        try await sameRealm.parallel(scope: IsolationScope(ctx: sameRealm, name: FooKey.name), CustomEvent.self)
        #expect(finished.value == 4)
    }

    @Test func parallelRethrowsAListenerErrorAfterTheOthersFinish() async throws {
        let (root, _) = try makeRoot()
        let calls = Counter()
        try root.on(CustomEvent.self) { throw ListenerError() }
        try root.on(CustomEvent.self) { calls.hit() }
        let error = await #expect(throws: AggregateError.self) { try await root.parallel(CustomEvent.self) }
        #expect(error?.errors.map { $0 as? ListenerError } == [ListenerError()])
        #expect(calls.value == 1)
    }

    @Test func serialAwaitsListenersInOrderAndReturnsTheFirstResult() async throws {
        let (root, _) = try makeRoot()
        #expect(try await root.serial(Answer.self) == nil)
        let trail = Trail()
        let gate = Gate()
        try root.onBail(Answer.self) { () async -> String? in
            await gate.pass()
            trail.add("first")
            return nil
        }
        try root.onBail(Answer.self) { () -> String? in
            trail.add("second")
            return "bailed"
        }
        try root.onBail(Answer.self) { () -> String? in
            trail.add("third")
            return "late"
        }
        let running = Task { @CordisActor in try await root.serial(Answer.self) }
        await gate.reached()
        #expect(trail.entries.isEmpty)
        gate.open()
        #expect(try await running.value == "bailed")
        #expect(trail.entries == ["first", "second"])
    }

    @Test func serialRethrowsAListenerError() async throws {
        let (root, _) = try makeRoot()
        try root.onBail(Answer.self) { () async throws -> String? in throw ListenerError(message: "message") }
        await #expect(throws: ListenerError(message: "message")) { try await root.serial(Answer.self) }
    }

    @Test func bailCallsListenersInOrderAndStopsAtTheFirstResult() async throws {
        let (root, _) = try makeRoot()
        #expect(try await root.bail(Answer.self) == nil)
        let (inRealm, sameRealm, otherRealm) = realms(root)
        let calls = Counter()
        try inRealm.onBail(Answer.self) { () -> String? in
            calls.hit()
            return nil
        }
        #expect(try await root.bail(Answer.self) == nil)
        #expect(calls.value == 1)
        #expect(try await otherRealm.bail(scope: IsolationScope(ctx: otherRealm, name: FooKey.name), Answer.self) == nil)
        #expect(calls.value == 1)
        try root.onBail(Answer.self) { () -> String? in "bailed" }
        try root.onBail(Answer.self) { () -> String? in
            calls.hit()
            return "late"
        }
        #expect(try await sameRealm.bail(Answer.self) == "bailed")
        #expect(calls.value == 2)
    }

    @Test func bailThrowsAListenerError() async throws {
        let (root, _) = try makeRoot()
        try root.onBail(Answer.self) { () throws -> String? in throw ListenerError(message: "message") }
        await #expect(throws: ListenerError(message: "message")) { try await root.bail(Answer.self) }
    }

    @Test func waterfallPassesEachListenerANextThatRunsTheRestOfTheChain() async throws {
        let (root, _) = try makeRoot()
        let calls = (Counter(), Counter(), Counter(), Counter())
        try root.on(Sum.self) { value, next in
            calls.0.hit()
            return value + (try await next())
        }
        try root.on(Sum.self) { value, next in
            calls.1.hit()
            return value + (try await next())
        }
        #expect(try await root.waterfall(Sum.self, 1) { 2 } == 4)
        #expect(calls.0.value == 1 && calls.1.value == 1)
        calls.0.reset()
        calls.1.reset()
        try root.on(Sum.self) { value, _ in
            calls.2.hit()
            return value
        }
        try root.on(Sum.self) { value, next in
            calls.3.hit()
            return value + (try await next())
        }
        #expect(try await root.waterfall(Sum.self, 1) { 2 } == 3)
        #expect(calls.0.value == 1 && calls.1.value == 1 && calls.2.value == 1)
        #expect(calls.3.value == 0)
    }

    @Test func aWaterfallNextCalledTwiceThrows() async throws {
        let (root, _) = try makeRoot()
        try root.on(Sum.self) { value, next in
            _ = try await next()
            return try await next()
        }
        let error = await #expect(throws: CordisError.self) { try await root.waterfall(Sum.self, 1) { 2 } }
        #expect(error?.code == .nextCalledMultipleTimes)
        #expect(error?.message == "next() called multiple times")
    }

    @Test func aPluginsListenersAreEffectsRemovedWhenItUnloads() async throws {
        let (root, _) = try makeRoot()
        let calls = Counter()
        let fiber = try root.plugin(FunctionPlugin<NoConfig>(name: "listener") { _, _, scope in
            try scope.ctx.on(CustomEvent.self) { calls.hit() }
        })
        try await fiber.await()
        #expect(fiber.effects == [EffectMeta(label: "ctx.on(\"custom-event\")")])
        try root.emit(CustomEvent.self)
        try await fiber.dispose()
        try root.emit(CustomEvent.self)
        #expect(calls.value == 1)
        #expect(root.listenerCounts["custom-event"] == nil)
    }
}
