import Testing
@testable import Cordis

/// What a timer test's callbacks saw.
@CordisActor
final class TimerProbe {
    var fired: [String] = []
    var count: Int { fired.count }
    func add(_ entry: String) { fired.append(entry) }
}

struct CallbackFailed: Error {}

/// A world on a clock the test advances, with a plugin fiber whose context makes the timers.
@CordisActor
func timerWorld() async throws -> (root: Context, clock: ManualClock, logs: CapturedLogs, fiber: Fiber) {
    let clock = ManualClock()
    let root = Context(clock: clock)
    let logs = CapturedLogs()
    try root.logger.exporter(logs)
    let fiber = try root.plugin(FunctionPlugin<NoConfig>(name: "timers") { _, _, _ in })
    try await fiber.await()
    return (root, clock, logs, fiber)
}

/// Yields until the timer tasks woken by the clock have run (at most a bounded number of turns).
@CordisActor
func drain() async {
    for _ in 0..<50 { await Task.yield() }
}

/// The timers (cordis's timer plugin) on an injected clock: no test waits in real time.
@Suite("Timers", .timeLimit(.minutes(1))) @CordisActor
struct TimerTests {
    // MARK: timeout

    @Test func aTimeoutFiresOnceWhenItsDelayHasPassed() async throws {
        let (_, clock, _, fiber) = try await timerWorld()
        let probe = TimerProbe()
        try fiber.ctx.timeout(after: .seconds(1)) { probe.add("fired") }
        #expect(fiber.effects.map(\.label) == ["ctx.timeout()"])
        await clock.awaitSleeping(1)
        clock.advance(by: .milliseconds(999))
        await drain()
        #expect(probe.count == 0)
        clock.advance(by: .milliseconds(1))
        #expect(await eventually { probe.count == 1 })
        // Done: it left the fiber's effects and waits for nothing more.
        #expect(fiber.effects.isEmpty)
        #expect(clock.sleeping == 0)
        clock.advance(by: .seconds(5))
        await drain()
        #expect(probe.fired == ["fired"])
    }

    @Test func aDisposedTimeoutNeverFires() async throws {
        let (_, clock, _, fiber) = try await timerWorld()
        let probe = TimerProbe()
        let handle = try fiber.ctx.timeout(after: .seconds(1)) { probe.add("fired") }
        await clock.awaitSleeping(1)
        try await handle.dispose()
        #expect(clock.sleeping == 0)
        clock.advance(by: .seconds(2))
        await drain()
        #expect(probe.count == 0)
    }

    @Test func aTimeoutDisposedInTheTurnItsDeadlinePassesNeverFires() async throws {
        let (_, clock, _, fiber) = try await timerWorld()
        let probe = TimerProbe()
        let handle = try fiber.ctx.timeout(after: .seconds(1)) { probe.add("fired") }
        await clock.awaitSleeping(1)
        // The wait ends (its task is queued to run) and the effect is reverted before that task runs.
        clock.advance(by: .seconds(1))
        try await handle.dispose()
        await drain()
        #expect(probe.count == 0)
    }

    @Test func unloadingTheFiberCancelsItsPendingTimeout() async throws {
        let (_, clock, _, fiber) = try await timerWorld()
        let probe = TimerProbe()
        try fiber.ctx.timeout(after: .seconds(1)) { probe.add("fired") }
        try fiber.ctx.timeout(after: .seconds(3)) { probe.add("fired late") }
        // One wait on the clock serves every timer of the world.
        await clock.awaitSleeping(1)
        #expect(clock.sleeping == 1)
        try await fiber.dispose()
        #expect(clock.sleeping == 0)
        clock.advance(by: .seconds(10))
        await drain()
        #expect(probe.count == 0)
    }

    @Test func aTimeoutCallbackThatThrowsIsLoggedAndTheFiberGoesOn() async throws {
        let (_, clock, logs, fiber) = try await timerWorld()
        let probe = TimerProbe()
        try fiber.ctx.timeout(after: .seconds(1)) { throw CallbackFailed() }
        try fiber.ctx.timeout(after: .seconds(2)) { probe.add("second") }
        await clock.awaitSleeping(1)
        clock.advance(by: .seconds(1))
        #expect(await eventually { logs.at(.error).contains { $0.text.contains("timeout callback of timers failed") } })
        #expect(fiber.state == .active)
        await clock.awaitSleeping(1)
        clock.advance(by: .seconds(1))
        #expect(await eventually { probe.fired == ["second"] })
    }

    @Test func timersOfSeveralFibersFireInDeadlineOrderAndOneUnloadLeavesTheOthers() async throws {
        let (root, clock, _, first) = try await timerWorld()
        let second = try root.plugin(FunctionPlugin<NoConfig>(name: "second") { _, _, _ in })
        try await second.await()
        let probe = TimerProbe()
        try first.ctx.timeout(after: .seconds(3)) { probe.add("first 3") }
        try second.ctx.timeout(after: .seconds(1)) { probe.add("second 1") }
        try first.ctx.timeout(after: .seconds(2)) { probe.add("first 2") }
        try second.ctx.timeout(after: .seconds(4)) { probe.add("second 4") }
        await clock.awaitSleeping(1)
        clock.advance(by: .seconds(1))
        #expect(await eventually { probe.fired == ["second 1"] })
        try await first.dispose()
        await clock.awaitSleeping(1)
        clock.advance(by: .seconds(2))
        await drain()
        #expect(probe.fired == ["second 1"])
        await clock.awaitSleeping(1)
        clock.advance(by: .seconds(1))
        #expect(await eventually { probe.fired == ["second 1", "second 4"] })
        #expect(clock.sleeping == 0)
    }

    // MARK: sleep

    @Test func sleepReturnsWhenItsDelayHasPassed() async throws {
        let (_, clock, _, fiber) = try await timerWorld()
        let probe = TimerProbe()
        let ctx = fiber.ctx
        Task { @CordisActor in
            do {
                try await ctx.sleep(for: .milliseconds(500))
                probe.add("woke")
            } catch {
                probe.add("threw \(error)")
            }
        }
        await clock.awaitSleeping(1)
        #expect(fiber.effects.map(\.label) == ["ctx.sleep()"])
        clock.advance(by: .milliseconds(499))
        await drain()
        #expect(probe.count == 0)
        clock.advance(by: .milliseconds(1))
        #expect(await eventually { probe.fired == ["woke"] })
        #expect(fiber.effects.isEmpty)
    }

    @Test func sleepThrowsACordisErrorWhenTheFiberUnloads() async throws {
        let (_, clock, _, fiber) = try await timerWorld()
        let probe = TimerProbe()
        let ctx = fiber.ctx
        Task { @CordisActor in
            do {
                try await ctx.sleep(for: .seconds(60))
                probe.add("woke")
            } catch let error as CordisError {
                probe.add("\(error.code): \(error.message)")
            } catch {
                probe.add("other \(error)")
            }
        }
        await clock.awaitSleeping(1)
        try await fiber.restart()
        #expect(await eventually { probe.count == 1 })
        #expect(probe.fired == [
            "unloaded: ctx.sleep() of plugin timers ended early: the plugin's context has been disposed",
        ])
        #expect(clock.sleeping == 0)
    }

    @Test func sleepFromAnUnloadedContextIsRefused() async throws {
        let (_, _, _, fiber) = try await timerWorld()
        let ctx = fiber.ctx
        try await fiber.dispose()
        await #expect(throws: CordisError(.inactiveEffect, "cannot create effect on inactive context")) {
            try await ctx.sleep(for: .seconds(1))
        }
    }

    // MARK: interval

    @Test func anIntervalTicksEveryPeriodUntilItsHandleIsDisposed() async throws {
        let (_, clock, _, fiber) = try await timerWorld()
        let probe = TimerProbe()
        let handle = try fiber.ctx.interval(every: .seconds(1)) { probe.add("tick") }
        for expected in 1...3 {
            await clock.awaitSleeping(1)
            clock.advance(by: .seconds(1))
            #expect(await eventually { probe.count == expected })
        }
        await clock.awaitSleeping(1)
        try await handle.dispose()
        #expect(clock.sleeping == 0)
        clock.advance(by: .seconds(5))
        await drain()
        #expect(probe.count == 3)
    }

    @Test func aRestartedPluginsOldIntervalNeverTicksAgain() async throws {
        let clock = ManualClock()
        let root = Context(clock: clock)
        let probe = TimerProbe()
        var life = 0
        let fiber = try root.plugin(FunctionPlugin<NoConfig>(name: "ticker") { _, _, scope in
            life += 1
            let current = life
            try scope.ctx.interval(every: .seconds(1)) { probe.add("life \(current)") }
        })
        try await fiber.await()
        await clock.awaitSleeping(1)
        clock.advance(by: .seconds(1))
        #expect(await eventually { probe.count == 1 })
        await clock.awaitSleeping(1)
        try await fiber.restart()
        // Only the new life's interval waits on the clock.
        #expect(clock.sleeping <= 1)
        await clock.awaitSleeping(1)
        #expect(clock.sleeping == 1)
        clock.advance(by: .seconds(1))
        #expect(await eventually { probe.count == 2 })
        await clock.awaitSleeping(1)
        clock.advance(by: .seconds(1))
        #expect(await eventually { probe.count == 3 })
        await drain()
        #expect(probe.fired == ["life 1", "life 2", "life 2"])
    }

    @Test func anIntervalCallbackThatThrowsIsLoggedAndTheIntervalGoesOn() async throws {
        let (_, clock, logs, fiber) = try await timerWorld()
        let probe = TimerProbe()
        try fiber.ctx.interval(every: .seconds(1)) {
            probe.add("tick")
            throw CallbackFailed()
        }
        for expected in 1...2 {
            await clock.awaitSleeping(1)
            clock.advance(by: .seconds(1))
            #expect(await eventually { probe.count == expected })
        }
        #expect(await eventually { logs.at(.error).filter { $0.text.contains("interval callback of timers failed") }.count == 2 })
        #expect(fiber.state == .active)
    }

    @Test func intervalTicksAsAnAsyncSequenceEndWhenTheFiberUnloads() async throws {
        let (_, clock, _, fiber) = try await timerWorld()
        let ticks = try fiber.ctx.interval(every: .milliseconds(250))
        let probe = TimerProbe()
        let reader = Task { @CordisActor in
            for await tick in ticks { probe.add("tick \(tick)") }
            probe.add("ended")
        }
        for expected in 1...2 {
            await clock.awaitSleeping(1)
            clock.advance(by: .milliseconds(250))
            #expect(await eventually { probe.count == expected })
        }
        await clock.awaitSleeping(1)
        try await fiber.dispose()
        await reader.value
        #expect(probe.fired == ["tick 1", "tick 2", "ended"])
        #expect(clock.sleeping == 0)
    }

    // MARK: throttle

    @Test func throttleRunsAtOnceThenHoldsTheLatestCallUntilTheDelayHasPassed() async throws {
        let (_, clock, _, fiber) = try await timerWorld()
        let probe = TimerProbe()
        let throttled = try fiber.ctx.throttle(.seconds(1)) { (value: Int) in probe.add("run \(value)") }
        throttled(1)
        #expect(probe.fired == ["run 1"])
        clock.advance(by: .milliseconds(600))
        throttled(2)
        throttled(3)
        #expect(probe.count == 1)
        await clock.awaitSleeping(1)
        #expect(clock.sleeping == 1)
        // The held call runs when a second has passed since the last run, with the latest value.
        clock.advance(by: .milliseconds(399))
        await drain()
        #expect(probe.count == 1)
        clock.advance(by: .milliseconds(1))
        #expect(await eventually { probe.fired == ["run 1", "run 3"] })
        // Exactly one delay after that run, a call runs at once; a millisecond less is held.
        clock.advance(by: .milliseconds(999))
        throttled(4)
        #expect(probe.count == 2)
        await clock.awaitSleeping(1)
        clock.advance(by: .milliseconds(1))
        #expect(await eventually { probe.fired == ["run 1", "run 3", "run 4"] })
        clock.advance(by: .seconds(1))
        throttled(5)
        #expect(probe.fired == ["run 1", "run 3", "run 4", "run 5"])
        #expect(clock.sleeping == 0)
    }

    @Test func throttleWithoutTrailingDropsEarlyCalls() async throws {
        let (_, clock, _, fiber) = try await timerWorld()
        let probe = TimerProbe()
        let throttled = try fiber.ctx.throttle(.seconds(1), trailing: false) { probe.add("run") }
        throttled()
        clock.advance(by: .milliseconds(500))
        throttled()
        #expect(clock.sleeping == 0)
        clock.advance(by: .seconds(2))
        await drain()
        #expect(probe.count == 1)
        throttled()
        #expect(probe.count == 2)
    }

    @Test func aDisposedThrottleDropsItsHeldCallAndIgnoresLaterOnes() async throws {
        let (_, clock, _, fiber) = try await timerWorld()
        let probe = TimerProbe()
        let throttled = try fiber.ctx.throttle(.seconds(1)) { probe.add("run") }
        throttled()
        clock.advance(by: .milliseconds(500))
        throttled()
        await clock.awaitSleeping(1)
        await throttled.dispose()
        #expect(clock.sleeping == 0)
        #expect(!throttled.isActive)
        clock.advance(by: .seconds(2))
        throttled()
        await drain()
        #expect(probe.count == 1)
    }

    @Test func unloadingTheFiberCancelsAHeldThrottledCall() async throws {
        let (_, clock, _, fiber) = try await timerWorld()
        let probe = TimerProbe()
        let throttled = try fiber.ctx.throttle(.seconds(1)) { probe.add("run") }
        throttled()
        clock.advance(by: .milliseconds(10))
        throttled()
        await clock.awaitSleeping(1)
        try await fiber.dispose()
        #expect(clock.sleeping == 0)
        clock.advance(by: .seconds(2))
        throttled()
        await drain()
        #expect(probe.count == 1)
    }

    // MARK: debounce

    @Test func debounceRunsOnceCallsHaveStoppedForTheDelay() async throws {
        let (_, clock, _, fiber) = try await timerWorld()
        let probe = TimerProbe()
        let debounced = try fiber.ctx.debounce(.seconds(1)) { (value: String) in probe.add(value) }
        debounced("a")
        await clock.awaitSleeping(1)
        clock.advance(by: .milliseconds(400))
        debounced("b")
        await drain()
        await clock.awaitSleeping(1)
        #expect(clock.sleeping == 1)
        clock.advance(by: .milliseconds(400))
        debounced("c")
        await drain()
        await clock.awaitSleeping(1)
        #expect(probe.count == 0)
        // One delay after the last call, not before.
        clock.advance(by: .milliseconds(999))
        await drain()
        #expect(probe.count == 0)
        clock.advance(by: .milliseconds(1))
        #expect(await eventually { probe.fired == ["c"] })
        clock.advance(by: .seconds(5))
        await drain()
        #expect(probe.fired == ["c"])
    }

    @Test func aDisposedDebounceNeverRuns() async throws {
        let (_, clock, _, fiber) = try await timerWorld()
        let probe = TimerProbe()
        let debounced = try fiber.ctx.debounce(.seconds(1)) { probe.add("run") }
        debounced()
        await clock.awaitSleeping(1)
        try await fiber.dispose()
        #expect(clock.sleeping == 0)
        debounced()
        clock.advance(by: .seconds(2))
        await drain()
        #expect(probe.count == 0)
        #expect(clock.sleeping == 0)
    }

    // MARK: bad input

    @Test func delaysATimerCannotWaitForAreErrorsNamingThePlugin() async throws {
        let (_, _, _, fiber) = try await timerWorld()
        let ctx = fiber.ctx
        func expectInvalid(_ message: String, _ body: () throws -> Void) {
            #expect(throws: CordisError(.invalidDuration, message)) { try body() }
        }
        expectInvalid("ctx.timeout() of plugin timers: the delay is negative (-1.0 seconds)") {
            try ctx.timeout(after: .seconds(-1)) {}
        }
        expectInvalid("ctx.timeout() of plugin timers: the delay is not a finite number of seconds (nan)") {
            try ctx.timeout(seconds: .nan) {}
        }
        expectInvalid("ctx.interval() of plugin timers: the delay is not a finite number of seconds (inf)") {
            try ctx.interval(seconds: .infinity) {}
        }
        expectInvalid("ctx.interval() of plugin timers: the delay must be greater than zero") {
            try ctx.interval(every: .zero) {}
        }
        expectInvalid("ctx.interval() of plugin timers: the delay must be greater than zero") {
            _ = try ctx.interval(every: .zero)
        }
        expectInvalid("ctx.throttle() of plugin timers: the delay is negative (-0.5 seconds)") {
            _ = try ctx.throttle(.milliseconds(-500)) {}
        }
        expectInvalid(
            "ctx.debounce() of plugin timers: the delay is too long (1000000000000.0 seconds); the longest is 1000000000 seconds"
        ) {
            _ = try ctx.debounce(.seconds(1_000_000_000_000)) {}
        }
        expectInvalid(
            "ctx.timeout() of plugin timers: the delay is too long (1e+300 seconds); the longest is 1000000000 seconds"
        ) {
            try ctx.timeout(seconds: 1e300) {}
        }
        await #expect(throws: CordisError(.invalidDuration, "ctx.sleep() of plugin timers: the delay is negative (-2.0 seconds)")) {
            try await ctx.sleep(seconds: -2)
        }
        // Nothing was registered by the refused calls.
        #expect(fiber.effects.isEmpty)
    }
}
