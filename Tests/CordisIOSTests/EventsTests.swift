import Cordis
import Testing

/// Ports cordis-ios's `Tests/CordisTests/EventsTests.swift`: listeners by `EventKey` (`on`, `once`,
/// `onBail`, waterfalls) and the dispatches (`emit`, `parallel`, `serial`, `bail`, `waterfall`), with
/// and without an `EventScope`.
@Suite("EventsTests")
@CordisActor
struct EventsTests {
    /// Ports cordis-ios EventsTests "removes empty event buckets after disposal".
    @Test("removes empty event buckets after disposal")
    func anEventWithoutListenersLeavesTheSnapshot() async throws {
        let root = Context()
        let first = try root.on(CustomEvent.self) { _ in }
        let second = try root.on(CustomEvent.self) { _ in }

        try await first.dispose()
        #expect(root.events.snapshot[CustomEvent.name] != nil)
        try await second.dispose()
        #expect(root.events.snapshot[CustomEvent.name] == nil)
    }

    /// Ports cordis-ios EventsTests "ctx.on()".
    @Test("ctx.on()")
    func aListenerHearsEveryEmissionUntilDisposed() async throws {
        let root = Context()
        let heard = Recorder<Void>()
        let listener = try root.on(CustomEvent.self) { _ in heard.record(()) }

        try root.emit(CustomEvent.self)
        #expect(heard.count == 1)
        try root.emit(CustomEvent.self)
        #expect(heard.count == 2)

        try await listener.dispose()
        try root.emit(CustomEvent.self)
        #expect(heard.count == 2)
    }

    /// Ports cordis-ios EventsTests "ctx.once()".
    @Test("ctx.once()")
    func aOnceListenerHearsOnlyTheFirstEmission() async throws {
        let root = Context()
        let heard = Recorder<Void>()
        let listener = try root.once(CustomEvent.self) { _ in heard.record(()) }

        try root.emit(CustomEvent.self)
        #expect(heard.count == 1)
        try root.emit(CustomEvent.self)
        #expect(heard.count == 1)

        try await listener.dispose()
        try root.emit(CustomEvent.self)
        #expect(heard.count == 1)
    }

    /// Ports cordis-ios EventsTests "ctx.parallel()".
    @Test("ctx.parallel()")
    func parallelHonoursTheScopeAndAggregatesEveryFailure() async throws {
        let root = Context()
        try await root.parallel(CustomEvent.self)

        let heard = Recorder<Void>()
        let failing = Box(false)
        try root.intercept(FilterKey.self, true).on(CustomEvent.self) { _ in
            heard.record(())
            if failing.value { throw TestError("test") }
        }

        try await root.parallel(CustomEvent.self)
        #expect(heard.count == 1)
        try await root.parallel(scope: Session(flag: false), CustomEvent.self)
        #expect(heard.count == 1)
        try await root.parallel(scope: Session(flag: true), CustomEvent.self)
        #expect(heard.count == 2)

        // One listener failing does not stop the others: both errors come back together.
        let finished = Box(false)
        let slow = try root.on(CustomEvent.self) { _ in
            await Task.yield()
            finished.value = true
            throw TestError("async")
        }
        failing.value = true
        let aggregate = await #expect(throws: AggregateError.self) { try await root.parallel(CustomEvent.self) }
        #expect(Set(aggregate?.errors.map { "\($0)" } ?? []) == ["test", "async"])
        #expect(finished.value)
        try await slow.dispose()
    }

    /// Ports cordis-ios EventsTests "ctx.emit()".
    @Test("ctx.emit()")
    func emitHonoursTheScopeAndRethrowsAListenersError() async throws {
        let root = Context()
        try root.emit(CustomEvent.self)

        let heard = Recorder<Void>()
        let failing = Box(false)
        try root.intercept(FilterKey.self, true).on(CustomEvent.self) { _ in
            heard.record(())
            if failing.value { throw TestError("test") }
        }

        try root.emit(CustomEvent.self)
        #expect(heard.count == 1)
        try root.emit(scope: Session(flag: false), CustomEvent.self)
        #expect(heard.count == 1)
        try root.emit(scope: Session(flag: true), CustomEvent.self)
        #expect(heard.count == 2)

        failing.value = true
        expectError("test") { try root.emit(CustomEvent.self) }
    }

    /// Ports cordis-ios EventsTests "ctx.serial()".
    @Test("ctx.serial()")
    func serialHonoursTheScopeAndRethrowsAListenersError() async throws {
        let root = Context()
        try await root.serial(CustomEvent.self)

        let heard = Recorder<Void>()
        let failing = Box(false)
        try root.intercept(FilterKey.self, true).on(CustomEvent.self) { _ in
            heard.record(())
            if failing.value { throw TestError("message") }
        }

        try await root.serial(CustomEvent.self)
        #expect(heard.count == 1)
        try await root.serial(scope: Session(flag: false), CustomEvent.self)
        #expect(heard.count == 1)
        try await root.serial(scope: Session(flag: true), CustomEvent.self)
        #expect(heard.count == 2)

        failing.value = true
        await #expect(throws: TestError("message")) { try await root.serial(CustomEvent.self) }
    }

    /// Ports cordis-ios EventsTests "ctx.bail()".
    @Test("ctx.bail()")
    func bailStopsAtTheFirstAnswerWithinTheScope() async throws {
        let root = Context()
        #expect(try await root.bail(WaterfallEvent.self, 1) == nil)

        let asked = Recorder<Int>()
        let failing = Box(false)
        try root.intercept(FilterKey.self, true).onBail(WaterfallEvent.self) { value in
            asked.record(value)
            if failing.value { throw TestError("message") }
            return value * 10
        }
        let later = Recorder<Int>()
        try root.onBail(WaterfallEvent.self) { value in
            later.record(value)
            return nil
        }

        #expect(try await root.bail(WaterfallEvent.self, 1) == 10)
        #expect(asked.count == 1)
        #expect(try await root.bail(scope: Session(flag: false), WaterfallEvent.self, 2) == nil)
        #expect(asked.count == 1)
        #expect(try await root.bail(scope: Session(flag: true), WaterfallEvent.self, 3) == 30)
        #expect(asked.count == 2)
        // The later listener was asked only when the first one was filtered out.
        #expect(later.calls == [2])

        failing.value = true
        await #expect(throws: TestError("message")) { try await root.bail(WaterfallEvent.self, 4) }
    }

    /// Ports cordis-ios EventsTests "ctx.waterfall()".
    @Test("ctx.waterfall()")
    func aWaterfallRunsItsListenersAsAnOnionUntilOneStops() async throws {
        let root = Context()
        let first = Recorder<Void>()
        let second = Recorder<Void>()
        let third = Recorder<Void>()
        let fourth = Recorder<Void>()
        try root.on(WaterfallEvent.self) { value, next in
            first.record(())
            return value + (try await next())
        }
        try root.on(WaterfallEvent.self) { value, next in
            second.record(())
            return value + (try await next())
        }

        // 1 + (1 + terminal 2)
        #expect(try await root.waterfall(WaterfallEvent.self, 1) { 2 } == 4)
        #expect(first.count == 1)
        #expect(second.count == 1)
        first.reset()
        second.reset()

        // The third listener answers without calling `next`: the fourth and the terminal never run.
        try root.on(WaterfallEvent.self) { value, _ in
            third.record(())
            return value
        }
        try root.on(WaterfallEvent.self) { value, next in
            fourth.record(())
            return value + (try await next())
        }
        #expect(try await root.waterfall(WaterfallEvent.self, 1) { 2 } == 3)
        #expect(first.count == 1)
        #expect(second.count == 1)
        #expect(third.count == 1)
        #expect(fourth.count == 0)
    }

    /// Ports cordis-ios EventsTests "ctx.waterfall() rejects duplicate next()".
    @Test("ctx.waterfall() rejects duplicate next()")
    func callingNextTwiceThrows() async throws {
        let root = Context()
        let terminal = Recorder<Void>()
        let listener = Recorder<Void>()
        try root.on(WaterfallEvent.self) { _, next in
            listener.record(())
            _ = try await next()
            return try await next()
        }

        await #expect(throws: CordisError.self) {
            try await root.waterfall(WaterfallEvent.self, 1) {
                terminal.record(())
                return 2
            }
        }
        #expect(listener.count == 1)
        #expect(terminal.count == 1)
    }

    /// Ports cordis-ios EventsTests "ctx.waterfall() rejects continuations from outer frames".
    @Test("ctx.waterfall() rejects continuations from outer frames")
    func anOuterListenersNextCannotBeCalledAgainFromTheTerminal() async throws {
        let root = Context()
        let steps = Recorder<String>()
        let kept = Box<(@CordisActor () async throws -> Int)?>(nil)
        try root.on(WaterfallEvent.self) { _, next in
            kept.value = next
            steps.record("first")
            return try await next()
        }
        try root.on(WaterfallEvent.self) { _, next in
            steps.record("second")
            return try await next()
        }

        let error = await #expect(throws: (any Error).self) {
            try await root.waterfall(WaterfallEvent.self, 1) {
                steps.record("terminal")
                return try await kept.value!()
            }
        }
        #expect(error.map { "\($0)" } == "next() called multiple times")
        #expect(steps.calls == ["first", "second", "terminal"])
    }

    /// Ports cordis-ios EventsTests "ctx.waterfall() rejects duplicate next() after awaiting".
    @Test("ctx.waterfall() rejects duplicate next() after awaiting")
    func nextStaysUsedAfterTheChainReturned() async throws {
        let root = Context()
        let terminal = Recorder<Void>()
        try root.on(WaterfallEvent.self) { value, next in
            let rest = try await next()
            await Task.yield()
            await #expect(throws: CordisError.self) { _ = try await next() }
            return value + rest
        }

        #expect(try await root.waterfall(WaterfallEvent.self, 1) {
            terminal.record(())
            return 2
        } == 3)
        #expect(terminal.count == 1)
    }

    /// Ports cordis-ios EventsTests "ctx.waterfall() supports nested async calls".
    @Test("ctx.waterfall() supports nested async calls")
    func aListenerMayRunTheWaterfallAgain() async throws {
        let root = Context()
        let terminal = Recorder<Void>()
        let listener = Recorder<Void>()
        let terminalBody: @CordisActor () async throws -> Int = {
            terminal.record(())
            return 2
        }
        try root.on(WaterfallEvent.self) { value, next in
            listener.record(())
            let rest = try await next()
            guard value == 1 else { return rest }
            return rest + (try await root.waterfall(WaterfallEvent.self, 2, terminalBody))
        }

        #expect(try await root.waterfall(WaterfallEvent.self, 1, terminalBody) == 4)
        #expect(listener.count == 2)
        #expect(terminal.count == 2)
    }
}
