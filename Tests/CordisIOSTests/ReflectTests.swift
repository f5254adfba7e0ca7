import Cordis
import Testing

/// Ports cordis-ios's `Tests/CordisTests/ReflectTests.swift`: which service reads and writes a plugin
/// may make (`ctx[Key.self]`, `ctx.set`, `ctx.provide` without a value), and their errors.
@Suite("ReflectTests")
@CordisActor
struct ReflectTests {
    /// Ports cordis-ios ReflectTests "access check".
    @Test("access check")
    func readsNeedAnInjectAndWritesAProvide() async throws {
        let root = Context()

        try await root.plugin(functionPlugin { ctx, _, _ in
            expectError("cannot get property \"bar\" without inject") { _ = try ctx[Bar.self] }
            expectError("cannot set property \"bar\" without provide") { try ctx.set(Bar.self, 0) }
        }).await()

        try await root.plugin(functionPlugin { ctx, _, _ in
            expectError("cannot set property \"foo\" without provide") { try ctx.set(Foo.self, Payload(bar: 0)) }
            #expect(throws: Never.self) { _ = try ctx.provide(Foo.self) }
            expectError("service \"foo\" has been registered at <root>") { _ = try ctx.provide(Foo.self) }
            #expect(throws: Never.self) { try ctx.set(Foo.self, Payload(bar: 0)) }
        }).await()
    }

    /// Ports cordis-ios ReflectTests "service inject leak".
    @Test("service inject leak")
    func aDisposedConsumerCannotReadTheServiceItInjected() async throws {
        let root = Context()
        try root.provide(Foo.self)
        try root.set(Foo.self, Payload(bar: 1))
        let fiber = try await root.inject([Foo.self]) { _, _ in }.await()
        #expect(try fiber.ctx[Foo.self] == Payload(bar: 1))

        try await fiber.dispose()
        expectError("cannot get required service \"foo\" in inactive context") { _ = try fiber.ctx[Foo.self] }
    }
}
