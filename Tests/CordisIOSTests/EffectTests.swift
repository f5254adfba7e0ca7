import Cordis
import Testing

/// Ports cordis-ios's `Tests/CordisTests/EffectTests.swift`: effects made with `ctx.effect` in its
/// three forms (`sync:`, `scoped:`, async), what `getEffects()` lists, and how disposal and errors
/// revert what an effect collected.
@Suite("EffectTests")
@CordisActor
struct EffectTests {
    /// Ports cordis-ios EffectTests "dispose by plugin".
    @Test("dispose by plugin")
    func anEffectOfAPluginIsRevertedOnceWhenItsFiberIsDisposed() async throws {
        let root = Context()
        let reverted = Recorder<Void>()
        let fiber = try await root.plugin(functionPlugin { ctx, _, _ in
            try ctx.effect("test", sync: { { reverted.record(()) } })
        }).await()
        #expect(fiber.getEffects() == [EffectMeta(label: "test")])
        #expect(reverted.count == 0)

        try await fiber.dispose()
        #expect(reverted.count == 1)
        try await fiber.dispose()
        #expect(reverted.count == 1)
    }

    /// Ports cordis-ios EffectTests "dispose manually".
    @Test("dispose manually")
    func anEffectDisposedByItsHandleIsRevertedOnce() async throws {
        let root = Context()
        let reverted = Recorder<Void>()
        let handle = try root.effect(sync: { { reverted.record(()) } })
        #expect(root.fiber.getEffects() == [EffectMeta(label: "anonymous")])
        #expect(reverted.count == 0)

        try await handle.dispose()
        #expect(reverted.count == 1)
        try await handle.dispose()
        #expect(reverted.count == 1)
    }

    /// Ports cordis-ios EffectTests "yield dispose".
    @Test("yield dispose")
    func aScopedEffectRevertsWhatItCollectedNewestFirst() async throws {
        let root = Context()
        let order = Recorder<Int>()
        let handle = try root.effect(scoped: { outer in
            try outer.collect { order.record(1) }
            try outer.collect(root.on(CustomEvent.self) { _ in })
            try outer.collect { order.record(2) }
            try outer.collect(root.effect(scoped: { inner in
                try inner.collect(root.on(CustomEvent.self) { _ in })
                try inner.collect { order.record(3) }
            }))
        })
        try root.on(CustomEvent.self) { _ in }

        // Disposers collected with `collect { }` are not listed; nested effects and adopted listeners are.
        #expect(root.fiber.getEffects() == [
            EffectMeta(label: "anonymous", children: [
                EffectMeta(label: "ctx.on(\"custom-event\")"),
                EffectMeta(label: "anonymous", children: [EffectMeta(label: "ctx.on(\"custom-event\")")]),
            ]),
            EffectMeta(label: "ctx.on(\"custom-event\")"),
        ])
        #expect(order.calls == [])

        try await handle.dispose()
        #expect(order.calls == [3, 2, 1])
        try await handle.dispose()
        #expect(order.calls == [3, 2, 1])
    }

    /// Ports cordis-ios EffectTests "async return 1".
    @Test("async return 1")
    func anAsyncEffectIsReadyOnceItsBodyReturns() async throws {
        let root = Context()
        let order = Recorder<Int>()
        let gate = Gate()
        let handle = try root.effect { scope in
            await gate.wait()
            order.record(1)
            try scope.collect { order.record(2) }
        }
        try await gate.reached()
        #expect(order.calls == [])

        gate.open()
        try await handle.ready()
        #expect(order.calls == [1])
        try await handle.dispose()
        #expect(order.calls == [1, 2])
    }

    /// Ports cordis-ios EffectTests "async return 2".
    @Test("async return 2")
    func disposingAnAsyncEffectWaitsForItsBody() async throws {
        let root = Context()
        let order = Recorder<Int>()
        let gate = Gate()
        let handle = try root.effect { scope in
            await gate.wait()
            order.record(1)
            try scope.collect { order.record(2) }
        }
        let disposing = Task { try? await handle.dispose() }
        try await gate.reached()
        try await until("the effect to start disposing") { handle.isDisposed }
        #expect(order.calls == [])

        gate.open()
        await disposing.value
        #expect(order.calls == [1, 2])
    }

    /// An async effect whose body passes three gates, collecting a disposer after each.
    private func threeStepEffect(on root: Context, _ order: Recorder<Int>, _ gates: GateList) throws -> EffectHandle {
        try root.effect { scope in
            await gates.wait()
            order.record(1)
            try scope.collect { order.record(2) }
            await gates.wait()
            order.record(3)
            try scope.collect { order.record(4) }
            await gates.wait()
            order.record(5)
            try scope.collect { order.record(6) }
        }
    }

    /// Ports cordis-ios EffectTests "async yield 1".
    @Test("async yield 1")
    func anAsyncEffectRevertsEveryStepItCollectedNewestFirst() async throws {
        let root = Context()
        let order = Recorder<Int>()
        let gates = GateList("steps")
        let handle = try threeStepEffect(on: root, order, gates)
        #expect(order.calls == [])

        for index in 0..<3 { gates.gate(index).open() }
        try await until("the body to pass its three gates") { order.count == 3 }
        #expect(order.calls == [1, 3, 5])
        try await handle.dispose()
        #expect(order.calls == [1, 3, 5, 6, 4, 2])
    }

    /// Ports cordis-ios EffectTests "async yield 2 (aborted)".
    @Test("async yield 2 (aborted)")
    func anAsyncEffectDisposedBeforeItsFirstStepStopsAtItsFirstCollect() async throws {
        let root = Context()
        let order = Recorder<Int>()
        let gates = GateList("steps")
        let handle = try threeStepEffect(on: root, order, gates)
        try await gates.gate(0).reached()

        let disposing = Task { try? await handle.dispose() }
        try await until("the effect to start disposing") { handle.isDisposed }
        #expect(order.calls == [])

        for index in 0..<3 { gates.gate(index).open() }
        await disposing.value
        #expect(order.calls == [1, 2])
        #expect(loggedErrors(root) == 0)
    }

    /// Ports cordis-ios EffectTests "async yield 3 (aborted)".
    @Test("async yield 3 (aborted)")
    func anAsyncEffectDisposedMidwayStopsAtItsNextCollect() async throws {
        let root = Context()
        let order = Recorder<Int>()
        let gates = GateList("steps")
        let handle = try threeStepEffect(on: root, order, gates)
        #expect(order.calls == [])

        gates.gate(0).open()
        try await gates.gate(1).reached()
        #expect(order.calls == [1])

        let disposing = Task { try? await handle.dispose() }
        try await until("the effect to start disposing") { handle.isDisposed }
        #expect(order.calls == [1])

        gates.gate(1).open()
        gates.gate(2).open()
        await disposing.value
        #expect(order.calls == [1, 3, 4, 2])
    }

    /// Ports cordis-ios EffectTests "async yield 4 (await dispose)".
    @Test("async yield 4 (await dispose)")
    func readyWaitsForEveryStepOfAnAsyncEffect() async throws {
        let root = Context()
        let order = Recorder<Int>()
        let gates = GateList("steps")
        let handle = try threeStepEffect(on: root, order, gates)
        #expect(order.calls == [])

        for index in 0..<3 { gates.gate(index).open() }
        try await handle.ready()
        #expect(order.calls == [1, 3, 5])
        try await handle.dispose()
        #expect(order.calls == [1, 3, 5, 6, 4, 2])
    }

    /// Ports cordis-ios EffectTests "return with error".
    @Test("return with error")
    func aSyncEffectThatThrowsCollectsNothing() async throws {
        let root = Context()
        let order = Recorder<Int>()
        #expect(throws: TestError("test")) {
            _ = try root.effect(sync: {
                if order.count == 0 { throw TestError("test") }
                return { order.record(1) }
            })
        }
        try await until("the failed effect to be reverted") { root.fiber.getEffects().isEmpty }
        #expect(order.calls == [])
    }

    /// Ports cordis-ios EffectTests "yield with error".
    @Test("yield with error")
    func aScopedEffectThatThrowsRevertsWhatItCollected() async throws {
        let root = Context()
        let order = Recorder<Int>()
        #expect(throws: TestError("test")) {
            _ = try root.effect(scoped: { scope in
                try scope.collect { order.record(1) }
                throw TestError("test")
            })
        }
        try await until("the failed effect to be reverted") { root.fiber.getEffects().isEmpty && order.count > 0 }
        #expect(order.calls == [1])
    }

    /// Ports cordis-ios EffectTests "async return with error".
    @Test("async return with error")
    func readyRethrowsTheErrorOfAnAsyncEffectThatCollectedNothing() async throws {
        let root = Context()
        let order = Recorder<Int>()
        let handle = try root.effect { scope in
            await Task.yield()
            if order.count == 0 { throw TestError("test") }
            try scope.collect { order.record(1) }
        }
        #expect(order.calls == [])

        await #expect(throws: TestError("test")) { try await handle.ready() }
        #expect(order.calls == [])
    }

    /// Ports cordis-ios EffectTests "async yield with error".
    @Test("async yield with error")
    func readyRethrowsTheErrorOfAnAsyncEffectAfterRevertingWhatItCollected() async throws {
        let root = Context()
        let order = Recorder<Int>()
        let handle = try root.effect { scope in
            await Task.yield()
            try scope.collect { order.record(1) }
            throw TestError("test")
        }
        #expect(order.calls == [])

        await #expect(throws: TestError("test")) { try await handle.ready() }
        #expect(order.calls == [1])
    }
}
