import Testing
@testable import Cordis

/// cordis `dispose.spec.ts` (describe `Effects`), with gates in place of fake timers.
@Suite("Effects", .timeLimit(.minutes(1))) @CordisActor
struct EffectTests {
    struct TestError: Error, Equatable { var message = "test" }

    @Test func aPluginsEffectIsListedAndRevertedOnceWhenItsFiberIsDisposed() async throws {
        let (root, _) = try makeRoot()
        let disposed = Counter()
        let fiber = try root.plugin(FunctionPlugin<NoConfig>(name: "plugin") { _, _, scope in
            try scope.collect("test") { disposed.hit() }
        })
        try await fiber.await()
        #expect(fiber.effects == [EffectMeta(label: "test")])
        #expect(disposed.value == 0)
        try await fiber.dispose()
        #expect(disposed.value == 1)
        try await fiber.dispose()
        #expect(disposed.value == 1)
    }

    @Test func disposingAnEffectHandleByHandRunsItOnceAndForgetsIt() async throws {
        let (root, _) = try makeRoot()
        let before = root.fiber.effects.count
        let disposed = Counter()
        let handle = try root.fiber.openScope().collect { disposed.hit() }
        #expect(root.fiber.effects.count == before + 1)
        #expect(root.fiber.effects.last == EffectMeta(label: "anonymous"))
        try await handle.dispose()
        #expect(disposed.value == 1)
        #expect(handle.isDisposed)
        #expect(root.fiber.effects.count == before)
        try await handle.dispose()
        #expect(disposed.value == 1)
    }

    @Test func nestedEffectsAreListedAsChildrenAndRevertedNewestFirstInnermostFirst() async throws {
        let (root, _) = try makeRoot()
        let trail = Trail()
        let fiber = try root.plugin(FunctionPlugin<NoConfig>(name: "nested") { _, _, scope in
            try await scope.effect { outer in
                try outer.collect("d1") { trail.add("1") }
                try await outer.effect("inner") { inner in
                    try inner.collect("d2") { trail.add("2") }
                    return { trail.add("3") }
                }
                return nil
            }
            _ = try scope.ctx.on(CustomEvent.self) {}
        })
        try await fiber.await()
        #expect(fiber.effects == [
            EffectMeta(label: "anonymous", children: [
                EffectMeta(label: "d1"),
                EffectMeta(label: "inner", children: [EffectMeta(label: "d2"), EffectMeta(label: "inner")]),
            ]),
            EffectMeta(label: "ctx.on(\"custom-event\")"),
        ])
        #expect(trail.entries.isEmpty)
        try await fiber.dispose()
        #expect(trail.entries == ["3", "2", "1"])
        #expect(root.listenerCounts["custom-event"] == nil)
        try await fiber.dispose()
        #expect(trail.entries == ["3", "2", "1"])
    }

    @Test func anAsyncEffectBodyCollectsItsDisposerWhenItCompletes() async throws {
        let (root, _) = try makeRoot()
        let trail = Trail()
        let gate = Gate()
        let scope = try root.fiber.openScope()
        let running = Task { @CordisActor in
            try await scope.effect { _ in
                await gate.pass()
                trail.add("1")
                return { trail.add("2") }
            }
        }
        await gate.reached()
        #expect(trail.entries.isEmpty)
        gate.open()
        let handle = try await running.value
        #expect(trail.entries == ["1"])
        try await handle.dispose()
        #expect(trail.entries == ["1", "2"])
    }

    @Test func anAsyncEffectReturningAfterItsScopeClosedHasItsDisposerRunAtOnce() async throws {
        let (root, _) = try makeRoot()
        let trail = Trail()
        let gate = Gate()
        let scope = try root.fiber.openScope()
        let running = Task { @CordisActor in
            try await scope.effect { _ in
                await gate.pass()
                trail.add("1")
                return { trail.add("2") }
            }
        }
        await gate.reached()
        await root.fiber.dispose(reason: .explicit)
        #expect(trail.entries.isEmpty)
        gate.open()
        let handle = try await running.value
        #expect(handle.isDisposed)
        #expect(trail.entries == ["1", "2"])
    }

    @Test func anAsyncEffectThatCollectsStepByStepRevertsEveryStepNewestFirst() async throws {
        let (root, _) = try makeRoot()
        let trail = Trail()
        let gate = Gate()
        let scope = try root.fiber.openScope()
        let running = Task { @CordisActor in
            try await scope.effect { child in
                for (made, undone) in [("1", "2"), ("3", "4"), ("5", "6")] {
                    await gate.pass()
                    trail.add(made)
                    try child.collect { trail.add(undone) }
                }
                return nil
            }
        }
        gate.open()
        let handle = try await running.value
        #expect(trail.entries == ["1", "3", "5"])
        try await handle.dispose()
        #expect(trail.entries == ["1", "3", "5", "6", "4", "2"])
    }

    @Test func anAsyncEffectWhoseScopeClosesMidwayIsRefusedFurtherEffectsAndKeepsNothing() async throws {
        let (root, _) = try makeRoot()
        let trail = Trail()
        let gate = Gate()
        let scope = try root.fiber.openScope()
        let running = Task { @CordisActor in
            try await scope.effect { child in
                for (made, undone) in [("1", "2"), ("3", "4"), ("5", "6")] {
                    await gate.pass()
                    trail.add(made)
                    try child.collect { trail.add(undone) }
                }
                return nil
            }
        }
        await gate.reached(1)
        gate.releaseOnce()
        await gate.reached(2)
        #expect(trail.entries == ["1"])
        // Closing the owner mid-body reverts the step already collected.
        await root.fiber.dispose(reason: .explicit)
        #expect(trail.entries == ["1", "2"])
        gate.open()
        let error = await #expect(throws: CordisError.self) { try await running.value }
        #expect(error?.code == .inactiveEffect)
        #expect(error?.message == "cannot create effect on inactive context")
        #expect(trail.entries == ["1", "2", "3"])
    }

    @Test func aThrowingEffectBodyRethrowsAndLeavesNothing() async throws {
        let (root, _) = try makeRoot()
        let scope = try root.fiber.openScope()
        let before = scope.effects
        await #expect(throws: TestError()) {
            try await scope.effect { _ in throw TestError() }
        }
        #expect(scope.effects == before)
    }

    @Test func aBodyThatThrowsAfterCollectingRevertsWhatItCollectedBeforeRethrowing() async throws {
        let (root, _) = try makeRoot()
        let trail = Trail()
        let scope = try root.fiber.openScope()
        let before = scope.effects
        await #expect(throws: TestError()) {
            try await scope.effect { child in
                try child.collect { trail.add("1") }
                throw TestError()
            }
        }
        #expect(trail.entries == ["1"])
        #expect(scope.effects == before)
    }

    @Test func anAsyncBodyThatThrowsAfterAwaitingRevertsWhatItCollected() async throws {
        let (root, _) = try makeRoot()
        let trail = Trail()
        let gate = Gate()
        let scope = try root.fiber.openScope()
        let running = Task { @CordisActor in
            try await scope.effect { child in
                try child.collect { trail.add("1") }
                await gate.pass()
                throw TestError()
            }
        }
        await gate.reached()
        #expect(trail.entries.isEmpty)
        gate.open()
        await #expect(throws: TestError()) { try await running.value }
        #expect(trail.entries == ["1"])
    }
}
