import Testing
@testable import Cordis

/// cordis `fiber.spec.ts` (describe `Fiber`), with gates in place of fake timers, plus the lifecycle
/// bugs of cordis and cordis-ios that Cordis fixes.
@Suite("Fiber", .timeLimit(.minutes(1))) @CordisActor
struct FiberTests {
    struct PluginError: Error, Equatable { var message = "plugin error" }
    struct Flag: Codable, Sendable, Equatable { var foo = false }

    /// A plugin injecting `foo` whose load waits for `load` and whose disposer waits for `unload`.
    func slowConsumer(on root: Context, load: Gate, unload: Gate) throws -> Fiber {
        try root.plugin(FunctionPlugin<NoConfig>(name: "slow", inject: [FooKey.self]) { _, _, scope in
            await load.pass()
            try scope.collect { await unload.pass() }
        })
    }

    @Test func aLoadInFlightIsNotInterruptedAndAProviderChangeDuringItReloadsAfterwards() async throws {
        let (root, _) = try makeRoot()
        let load = Gate(), unload = Gate()
        let provider = try root.provide(name: "foo", value: Box(1))
        let fiber = try slowConsumer(on: root, load: load, unload: unload)
        await load.reached(1)
        #expect(fiber.state == .loading)
        try await provider.dispose()
        #expect(fiber.state == .loading)
        load.releaseOnce()
        await unload.reached(1)
        #expect(fiber.state == .unloading)
        try root.provide(name: "foo", value: Box(1))
        #expect(fiber.state == .unloading)
        unload.releaseOnce()
        await load.reached(2)
        #expect(fiber.state == .loading)
        load.open()
        try await fiber.await()
        #expect(fiber.state == .active)
    }

    @Test func aProviderThatComesBackFromTheSameFiberDuringALoadCausesNoReloadAndServesTheNewValue() async throws {
        let (root, _) = try makeRoot()
        let load = Gate(), unload = Gate()
        let provider = try root.provide(name: "foo", value: Box(1))
        let fiber = try slowConsumer(on: root, load: load, unload: unload)
        await load.reached(1)
        try await provider.dispose()
        try root.provide(name: "foo", value: Box(2))
        load.open()
        try await fiber.await()
        await root.settled()
        #expect(fiber.state == .active)
        #expect(load.arrivalCount == 1)
        #expect(unload.arrivalCount == 0)
        #expect(try fiber.ctx[FooKey.self].value == 2)
    }

    @Test func aProviderWithdrawalWaitsUntilItsConsumersHaveUnloaded() async throws {
        let (root, _) = try makeRoot()
        let trail = Trail()
        let unload = Gate()
        let provider = try root.plugin(FunctionPlugin<NoConfig>(name: "foo-provider") { _, _, scope in
            try scope.collect { trail.add("provider teardown") }
            try scope.ctx.provide(FooKey.self, Box(7))
        })
        let consumer = try root.plugin(FunctionPlugin<NoConfig>(name: "consumer", inject: [FooKey.self]) { _, _, scope in
            let foo = try scope.ctx[FooKey.self]
            try scope.collect {
                await unload.pass()
                // An asynchronous disposer still uses the provider.
                let value = try scope.ctx[FooKey.self].value
                trail.add("consumer bye \(value) from \(foo.value)")
            }
        })
        await root.settled()
        #expect(consumer.state == .active)
        let withdrawal = Task { @CordisActor in try await provider.dispose() }
        await unload.reached()
        #expect(provider.state == .unloading)
        #expect(consumer.state == .unloading)
        #expect(trail.entries.isEmpty)
        unload.open()
        try await withdrawal.value
        #expect(trail.entries == ["consumer bye 7 from 7", "provider teardown"])
        #expect(consumer.state == .pending)
        #expect(provider.state == .disposed)
    }

    @Test func aConsumerOfTwoServicesOfOneProviderHoldsItsWithdrawalUntilItUnloadsEveryTime() async throws {
        let (root, _) = try makeRoot()
        let trail = Trail()
        let unload = Gate()
        let provider = try root.plugin(FunctionPlugin<NoConfig>(name: "foo-bar-provider") { _, _, scope in
            try scope.collect { trail.add("provider teardown") }
            try scope.ctx.provide(FooKey.self, Box(1))
            try scope.ctx.provide(BarKey.self, Box(2))
        })
        let consumer = try root.plugin(FunctionPlugin<NoConfig>(name: "consumer", inject: [FooKey.self, BarKey.self]) { _, _, scope in
            let sum = try scope.ctx[FooKey.self].value + scope.ctx[BarKey.self].value
            try scope.collect {
                await unload.pass()
                trail.add("consumer bye \(sum)")
            }
        })
        // Three lives of the provider; each withdrawal waits for the consumer, which holds both
        // services, and no longer.
        for life in 1...3 {
            await root.settled()
            #expect(consumer.state == .active)
            let withdrawal = Task { @CordisActor in try await provider.restart() }
            await unload.reached(life)
            #expect(provider.state == .unloading)
            #expect(trail.entries.count == 2 * (life - 1))
            unload.releaseOnce()
            try await withinDeadline("withdrawal \(life)") { try await withdrawal.value }
            #expect(Array(trail.entries.suffix(2)) == ["consumer bye 3", "provider teardown"])
        }
        await root.settled()
        #expect(consumer.state == .active)
        unload.open()
        try await withinDeadline("final withdrawal") { try await provider.dispose() }
        #expect(consumer.state == .pending)
        #expect(trail.entries.suffix(2) == ["consumer bye 3", "provider teardown"])
    }

    @Test func aPluginThatThrowsIsFailedWithItsListenersRolledBackAndOneErrorLogged() async throws {
        let (root, logs) = try makeRoot()
        let received = Counter()
        let apply = FunctionPlugin<Flag>(name: "apply") { ctx, config, _ in
            try ctx.on(CustomEvent.self) { received.hit() }
            if !config.foo { throw PluginError() }
        }
        let failing = try root.plugin(apply, config: Flag(foo: false))
        let working = try root.plugin(apply, config: Flag(foo: true))
        await root.settled()
        #expect(failing.state == .failed)
        #expect(failing.error as? PluginError == PluginError())
        #expect(working.state == .active)
        #expect(logs.at(.error).count == 1)
        try root.emit(CustomEvent.self)
        #expect(received.value == 1)
        await #expect(throws: PluginError()) { try await failing.await() }
    }

    @Test func aDisposerThatThrowsIsLoggedAndDisposeStillSucceeds() async throws {
        let (root, logs) = try makeRoot()
        let disposed = Counter()
        let fiber = try root.plugin(FunctionPlugin<NoConfig>(name: "throwing-disposer") { _, _, scope in
            try scope.collect("test") {
                disposed.hit()
                throw PluginError(message: "test")
            }
        })
        try await fiber.await()
        #expect(disposed.value == 0)
        try await fiber.dispose()
        #expect(disposed.value == 1)
        #expect(fiber.state == .disposed)
        #expect(logs.at(.error).count == 1)
        #expect(logs.at(.error).first?.text.contains("test") == true)
    }

    // MARK: - Do better than the anchors

    func statusTrail(_ root: Context) throws -> Trail {
        let trail = Trail()
        try root.on(StatusEvent.self) { change in
            trail.add("\(change.fiber.id) \(change.oldState)->\(change.fiber.state)")
        }
        return trail
    }

    @Test func aFiberDisposedWhilePendingReachesDisposedAndEmitsStatus() async throws {
        let (root, _) = try makeRoot()
        let trail = try statusTrail(root)
        let fiber = try root.plugin(FunctionPlugin<NoConfig>(name: "waiting", inject: [FooKey.self]) { _, _, _ in })
        try await fiber.await()
        #expect(fiber.state == .pending)
        try await fiber.dispose()
        #expect(fiber.state == .disposed)
        #expect(trail.entries == ["\(fiber.id) pending->disposed"])
    }

    @Test func aFiberDisposedWhileFailedReachesDisposedAndEmitsStatus() async throws {
        let (root, _) = try makeRoot()
        let trail = try statusTrail(root)
        let fiber = try root.plugin(FunctionPlugin<NoConfig>(name: "failing") { _, _, _ in throw PluginError() })
        await root.settled()
        #expect(fiber.state == .failed)
        try await fiber.dispose()
        #expect(fiber.state == .disposed)
        #expect(trail.entries.last == "\(fiber.id) failed->disposed")
    }

    @Test func everyStateChangeIsEmittedAsStatusInOrder() async throws {
        let (root, _) = try makeRoot()
        let trail = try statusTrail(root)
        let fiber = try root.plugin(FunctionPlugin<NoConfig>(name: "plain") { _, _, _ in })
        try await fiber.await()
        try await fiber.dispose()
        let id = fiber.id
        #expect(trail.entries == [
            "\(id) pending->loading", "\(id) loading->active", "\(id) active->unloading", "\(id) unloading->disposed",
        ])
    }

    @Test func aFiberDisposedWhileLoadingFinishesItsLoadThenUnloadsToDisposed() async throws {
        let (root, _) = try makeRoot()
        let load = Gate(), unload = Gate()
        unload.open()
        try root.provide(FooKey.self, Box(1))
        let fiber = try slowConsumer(on: root, load: load, unload: unload)
        await load.reached()
        let disposal = Task { @CordisActor in try await fiber.dispose() }
        #expect(await eventually { fiber.state == .loading && root.fibers.contains { $0 === fiber } })
        #expect(fiber.state == .loading)
        load.open()
        try await disposal.value
        #expect(fiber.state == .disposed)
        #expect(unload.arrivalCount == 1)
    }

    @Test func aFiberDisposedWhileUnloadingToPendingEndsDisposed() async throws {
        let (root, _) = try makeRoot()
        let load = Gate(), unload = Gate()
        load.open()
        let provider = try root.provide(FooKey.self, Box(1))
        let fiber = try slowConsumer(on: root, load: load, unload: unload)
        try await fiber.await()
        try await provider.dispose()
        await unload.reached()
        #expect(fiber.state == .unloading)
        let disposal = Task { @CordisActor in try await fiber.dispose() }
        unload.open()
        try await disposal.value
        #expect(fiber.state == .disposed)
        #expect(unload.arrivalCount == 1)
    }

    @Test func anUnloadingFiberRefusesNewEffectsWithAClearError() async throws {
        let (root, _) = try makeRoot()
        let refusals = Trail()
        let fiber = try root.plugin(FunctionPlugin<NoConfig>(name: "late") { _, _, scope in
            let ctx = scope.ctx
            try scope.collect {
                let attempts: [(String, @CordisActor () throws -> Void)] = [
                    ("on", { try ctx.on(CustomEvent.self) {} }),
                    ("plugin", { try ctx.plugin(FunctionPlugin<NoConfig>(name: "child") { _, _, _ in }) }),
                    ("collect", { try scope.collect {} }),
                    ("provide", { try ctx.provide(FooKey.self, Box(1)) }),
                    ("exportLogs", { try ctx.logger.exporter(CapturedLogs()) }),
                ]
                for (name, attempt) in attempts {
                    do {
                        try attempt()
                        refusals.add("\(name) accepted")
                    } catch let error as CordisError {
                        refusals.add("\(name): \(error.message)")
                    }
                }
            }
        })
        try await fiber.await()
        let before = root.listenerCounts
        try await fiber.dispose()
        #expect(refusals.entries == ["on", "plugin", "collect", "provide", "exportLogs"].map {
            "\($0): cannot create effect on inactive context"
        })
        #expect(root.listenerCounts == before)
        #expect(root.fibers.map(\.id) == [root.fiber.id])
        #expect(root.currentProvider(of: "foo") == nil)
    }

    @Test func restartRecoversAFailedFiber() async throws {
        let (root, _) = try makeRoot()
        let attempts = Counter()
        let fiber = try root.plugin(FunctionPlugin<NoConfig>(name: "flaky") { _, _, _ in
            attempts.hit()
            if attempts.value == 1 { throw PluginError() }
        })
        await #expect(throws: PluginError()) { try await fiber.await() }
        #expect(fiber.state == .failed)
        try await fiber.restart()
        #expect(fiber.state == .active)
        #expect(fiber.error == nil)
        #expect(attempts.value == 2)
    }

    @Test func restartReloadsAnActiveFiber() async throws {
        let (root, _) = try makeRoot()
        let trail = Trail()
        let fiber = try root.plugin(FunctionPlugin<NoConfig>(name: "restartable") { _, _, scope in
            trail.add("apply")
            try scope.collect { trail.add("dispose") }
        })
        try await fiber.await()
        try await fiber.restart()
        #expect(fiber.state == .active)
        #expect(trail.entries == ["apply", "dispose", "apply"])
    }

    @Test func updatingTheConfigRecoversAFailedFiber() async throws {
        let (root, _) = try makeRoot()
        let fiber = try root.plugin(FunctionPlugin<Flag>(name: "configured") { _, config, _ in
            if !config.foo { throw PluginError() }
        }, config: Flag(foo: false))
        await root.settled()
        #expect(fiber.state == .failed)
        try await fiber.update(Flag(foo: true))
        #expect(fiber.state == .active)
        #expect(fiber.config as? Flag == Flag(foo: true))
    }

    @Test func updatingTheConfigRestartsAnActiveFiberWithItAndEmitsUpdate() async throws {
        let (root, _) = try makeRoot()
        let seen = Trail()
        let updates = Counter()
        try root.on(UpdateEvent.self, options: EventOptions(global: true)) { _, next in
            try await next()
            updates.hit()
        }
        let fiber = try root.plugin(FunctionPlugin<Flag>(name: "configured") { _, config, scope in
            seen.add("\(config.foo)")
            try scope.collect { seen.add("dispose") }
        }, config: Flag(foo: false))
        try await fiber.await()
        try await fiber.update(Flag(foo: true))
        #expect(seen.entries == ["false", "dispose", "true"])
        #expect(updates.value == 1)
    }

    @Test func anInvalidConfigUpdateThrowsAndLeavesTheFiberAsItWas() async throws {
        let (root, _) = try makeRoot()
        let loads = Counter()
        let updates = Counter()
        try root.on(UpdateEvent.self, options: EventOptions(global: true)) { _, next in
            try await next()
            updates.hit()
        }
        let active = try root.plugin(FunctionPlugin<Flag>(name: "configured") { _, config, _ in
            loads.hit()
            if !config.foo { throw PluginError() }
        }, config: Flag(foo: true))
        try await active.await()
        let error = await #expect(throws: CordisError.self) { try await active.update("not a flag") }
        #expect(error?.code == .typeMismatch)
        #expect(active.state == .active)
        #expect(active.config as? Flag == Flag(foo: true))
        #expect(loads.value == 1)

        let failed = try root.plugin(FunctionPlugin<Flag>(name: "configured") { _, config, _ in
            if !config.foo { throw PluginError() }
        }, config: Flag(foo: false))
        await root.settled()
        await #expect(throws: CordisError.self) { try await failed.update(42) }
        #expect(failed.state == .failed)
        #expect(failed.config as? Flag == Flag(foo: false))
        #expect(updates.value == 0)
    }

    @Test func aDisposedFiberRefusesRestartAndUpdate() async throws {
        let (root, _) = try makeRoot()
        let fiber = try root.plugin(FunctionPlugin<Flag>(name: "gone") { _, _, _ in }, config: Flag())
        try await fiber.await()
        try await fiber.dispose()
        let restartError = await #expect(throws: CordisError.self) { try await fiber.restart() }
        #expect(restartError?.code == .disposed)
        let updateError = await #expect(throws: CordisError.self) { try await fiber.update(Flag(foo: true)) }
        #expect(updateError?.code == .disposed)
    }

    /// A consumer whose `apply` calls `foo` and fails with `withdrawn` while `gone` holds: what a remote
    /// call does when the member life its proxy stands for has ended, at once and without suspending.
    /// Counts its attempts; `loaded` is passed once a load succeeds.
    func withdrawnConsumer(on root: Context, gone: Box, attempts: Box, loaded: Gate) throws -> Fiber {
        try root.plugin(FunctionPlugin<NoConfig>(name: "caller", inject: [FooKey.self]) { _, _, _ in
            attempts.value += 1
            // Bounded for the run without the fix, which loaded again at once, in the same job, for ever.
            if gone.value == 1, attempts.value < 1_000 { throw CordisError(.withdrawn, "foo is gone") }
            await loaded.pass()
        })
    }

    @Test func aLoadFailingWithWithdrawnWhileItsProviderStaysRegisteredIsTriedAgainLaterNotAtOnce() async throws {
        let (root, _) = try makeRoot()
        let gone = Box(1), attempts = Box(0), loaded = Gate()
        loaded.open()
        try root.provide(name: "foo", value: Box(1))
        let fiber = try withdrawnConsumer(on: root, gone: gone, attempts: attempts, loaded: loaded)
        await root.settled()
        // One attempt, then `pending`: the actor is free (a node answers its peers and consoles).
        #expect(attempts.value == 1)
        #expect(fiber.state == .pending)
        // The provider serves again with nothing changed in the registry (a link taking over with the
        // proxies kept): the retry loads the fiber.
        gone.value = 0
        try await withinDeadline("the retry after a withdrawn load") { await loaded.reached(1) }
        await root.settled()
        #expect(fiber.state == .active)
        #expect(attempts.value == 2)
    }

    @Test func aLoadFailingWithWithdrawnLoadsAtOnceWhenItsProviderChangesAndNotAfterItIsDisposed() async throws {
        let (root, _) = try makeRoot()
        let gone = Box(1), attempts = Box(0), loaded = Gate()
        loaded.open()
        let provider = try root.provide(name: "foo", value: Box(1))
        let fiber = try withdrawnConsumer(on: root, gone: gone, attempts: attempts, loaded: loaded)
        await root.settled()
        #expect(fiber.state == .pending)
        // Another provider: no wait for the retry.
        try await provider.dispose()
        gone.value = 0
        try root.provide(name: "foo", value: Box(2))
        await root.settled()
        #expect(fiber.state == .active)
        #expect(attempts.value == 2)
        #expect(try fiber.ctx[FooKey.self].value == 2)
        // Failing again and disposed while its retry waits: the retry does nothing.
        gone.value = 1
        try await fiber.restart()
        #expect(fiber.state == .pending)
        try await fiber.dispose()
        gone.value = 0
        let other = try withdrawnConsumer(on: root, gone: gone, attempts: Box(0), loaded: loaded)
        try await withinDeadline("another consumer's load") { await loaded.reached(2) }
        #expect(other.state == .active)
        #expect(fiber.state == .disposed)
        #expect(attempts.value == 3)
    }

    @Test func theRetryAfterAWithdrawnLoadWaitsOnTheWorldsClock() async throws {
        let clock = ManualClock()
        let root = Context(clock: clock)
        let gone = Box(1), attempts = Box(0), loaded = Gate()
        loaded.open()
        try root.provide(name: "foo", value: Box(1))
        let fiber = try withdrawnConsumer(on: root, gone: gone, attempts: attempts, loaded: loaded)
        await root.settled()
        #expect(fiber.state == .pending)
        gone.value = 0
        // The retry waits 50 ms of the world's clock: 49 ms on, the fiber is still pending.
        try await withinDeadline("the retry's wait on the clock") { await clock.awaitSleeping(1) }
        clock.advance(by: .milliseconds(49))
        await root.settled()
        #expect(fiber.state == .pending)
        #expect(attempts.value == 1)
        clock.advance(by: .milliseconds(1))
        try await withinDeadline("the retry after a withdrawn load") { await loaded.reached(1) }
        await root.settled()
        #expect(fiber.state == .active)
        #expect(attempts.value == 2)
        #expect(clock.sleeping == 0)
    }

    @Test func theRetryAfterWithdrawnLoadsDoublesFrom50MillisecondsUpTo5Seconds() {
        let delays = [1, 2, 3, 4, 5, 6, 7, 8, 9, 1_000, Int.max].map { WithdrawnLoad.delay(afterFailures: $0) }
        #expect(delays == [50, 100, 200, 400, 800, 1_600, 3_200, 5_000, 5_000, 5_000, 5_000].map { .milliseconds($0) })
    }
}
