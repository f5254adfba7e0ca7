import Testing
@testable import Cordis

/// cordis `reflect.spec.ts` (describe `Reflect`): access checks on services.
@Suite("Reflect", .timeLimit(.minutes(1))) @CordisActor
struct ReflectTests {
    @Test func readingAServiceThatWasNotInjectedThrows() async throws {
        let (root, _) = try makeRoot()
        let messages = Trail()
        let sibling = try root.plugin(FunctionPlugin<NoConfig>(name: "bar-provider") { _, _, scope in try scope.ctx.provide(BarKey.self, Box(1)) })
        try await sibling.await()
        let fiber = try root.plugin(FunctionPlugin<NoConfig>(name: "reader") { _, _, scope in
            do { _ = try scope.ctx[BarKey.self] } catch let error as CordisError {
                messages.add(error.message)
            }
            do { _ = try scope.ctx.get(QuxKey.self, property: "x") } catch let error as CordisError {
                messages.add(error.message)
            }
        })
        try await fiber.await()
        #expect(messages.entries == [
            "cannot get property \"bar\" without inject", "cannot get property \"x\" without inject",
        ])
    }

    @Test func aServiceProvidedByAnAncestorIsReadableWithoutInject() async throws {
        let (root, _) = try makeRoot()
        try root.provide(FooKey.self, Box(3))
        let read = Trail()
        let fiber = try root.plugin(FunctionPlugin<NoConfig>(name: "outer") { _, _, scope in
            try scope.ctx.plugin(FunctionPlugin<NoConfig>(name: "inner") { _, _, scope in
                read.add("\(try scope.ctx[FooKey.self].value)")
            })
        })
        try await fiber.await()
        await root.settled()
        #expect(read.entries == ["3"])
    }

    @Test func aSecondProviderInTheSameRealmIsADuplicateError() async throws {
        let (root, _) = try makeRoot()
        let outcome = Trail()
        let fiber = try root.plugin(FunctionPlugin<NoConfig>(name: "provider") { _, _, scope in
            try scope.ctx.provide(FooKey.self, Box(1))
            do {
                try scope.ctx.provide(FooKey.self, Box(2))
                outcome.add("accepted")
            } catch let error as CordisError {
                outcome.add("\(error.code): \(error.message)")
            }
        })
        try await fiber.await()
        #expect(outcome.entries.count == 1)
        #expect(outcome.entries.first?.hasPrefix("duplicate-service: service \"foo\" has been registered at <provider>") == true)
        #expect(try root[FooKey.self].value == 1)
    }

    @Test func aDisposedFibersContextNoLongerServesItsInjectedServices() async throws {
        let (root, _) = try makeRoot()
        try root.provide(FooKey.self, Box(1))
        let fiber = try root.inject([FooKey.self]) { _, _ in }
        try await fiber.await()
        #expect(try fiber.ctx[FooKey.self].value == 1)
        try await fiber.dispose()
        let error = #expect(throws: CordisError.self) { try fiber.ctx[FooKey.self] }
        #expect(error?.message == "cannot get required service \"foo\" in inactive context")
    }

    @Test func readingAServiceAsTheWrongTypeSaysWhatItHolds() async throws {
        let (root, _) = try makeRoot()
        try root.provide(name: "foo", value: "a string")
        let error = #expect(throws: CordisError.self) { try root[FooKey.self] }
        #expect(error?.code == .typeMismatch)
    }

    @Test func theRootReadsAnyProvidedServiceAndSeesNothingElse() async throws {
        let (root, _) = try makeRoot()
        #expect(!root.has(FooKey.self))
        #expect(throws: CordisError.self) { try root[FooKey.self] }
        let fiber = try root.plugin(FunctionPlugin<NoConfig>(name: "provider") { _, _, scope in try scope.ctx.provide(FooKey.self, Box(5)) })
        try await fiber.await()
        #expect(try root[FooKey.self].value == 5)
    }
}
