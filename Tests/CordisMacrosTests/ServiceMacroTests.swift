import Testing

@Suite("ServiceMacro")
struct ServiceMacroTests {
    @Test func aServiceProvidesItselfUnderItsKey() {
        assertMacroExpansion(
            """
            @CordisActor @Service(ClockKey.self)
            final class ClockService {
                func now() -> Date { Date() }
            }
            """,
            expandsTo: """
            @CordisActor
            final class ClockService {
                func now() -> Date { Date() }

                let ctx: Cordis.Context

                let config: Config

                init(ctx: Cordis.Context, config: Config) {
                    self.ctx = ctx
                    self.config = config
                }

                static let injects: [Cordis.Dependency] = []

                static var inject: [any Cordis.ServiceKey.Type] {
                    []
                }

                typealias Config = Cordis.EmptyConfig

                typealias Key = ClockKey

                static let provides: [String] = [ClockKey.name]

                func provisions() -> [Cordis.ServiceProvision] {
                    [Cordis.ServiceProvision(ClockKey.self, self)]
                }
            }

            extension ClockService: Cordis.ServicePlugin {
            }
            """)
    }

    @Test func aPublicServiceThatInjectsListsItsDependency() {
        assertMacroExpansion(
            """
            @CordisActor @Service(StoreKey.self)
            public final class Store {
                @Inject(ClockKey.self) var clock: ClockService
            }
            """,
            expandsTo: """
            @CordisActor
            public final class Store {
                var clock: ClockService {
                    get throws {
                        try ctx.get(ClockKey.self, property: "clock")
                    }
                }

                public let ctx: Cordis.Context

                public let config: Config

                public init(ctx: Cordis.Context, config: Config) {
                    self.ctx = ctx
                    self.config = config
                }

                public static let injects: [Cordis.Dependency] = [Cordis.Dependency(ClockKey.self)]

                public static var inject: [any Cordis.ServiceKey.Type] {
                    [ClockKey.self]
                }

                public typealias Config = Cordis.EmptyConfig

                public typealias Key = StoreKey

                public static let provides: [String] = [StoreKey.name]

                public func provisions() -> [Cordis.ServiceProvision] {
                    [Cordis.ServiceProvision(StoreKey.self, self)]
                }
            }

            extension Store: Cordis.ServicePlugin {
            }
            """)
    }

    @Test func aServiceDeclaringBothApplyAndSetupIsWarnedThatApplyRuns() {
        let result = expandCordisMacros(
            in: """
            @CordisActor @Service(ClockKey.self)
            final class ClockService {
                func apply(_ scope: EffectScope) async throws {}
                func setup(_ scope: EffectScope) async throws {}
            }
            """)
        #expect(result.diagnostics == [
            ExpectedDiagnostic(
                "ClockService declares both apply(_:) and setup(_:): apply(_:) runs and setup(_:) is never called "
                    + "(the service is provided once apply(_:) returns); move the start-up into setup(_:) and "
                    + "remove apply(_:) to have the service provided before it runs",
                line: 4, column: 10, isWarning: true),
        ])
        // The class still becomes a service plugin.
        #expect(result.expanded.contains("extension ClockService: Cordis.ServicePlugin"))
    }

    @Test func aServiceWithOnlySetupOrOnlyApplyIsNotWarned() {
        for body in ["func setup(_ scope: EffectScope) async throws {}", "func apply(_ scope: EffectScope) async throws {}"] {
            let result = expandCordisMacros(
                in: """
                @CordisActor @Service(ClockKey.self)
                final class ClockService {
                    \(body)
                    static func setup() {}
                }
                """)
            #expect(result.diagnostics.isEmpty)
        }
    }

    @Test func aServiceThatDeclaresItsOwnKeyKeepsIt() {
        let result = expandCordisMacros(
            in: """
            @CordisActor @Service(ClockKey.self)
            final class ClockService {
                typealias Key = ClockKey
            }
            """)
        #expect(result.diagnostics.isEmpty)
        let keyLines = result.expanded.split(separator: "\n").filter { $0.contains("typealias Key") }
        #expect(keyLines.count == 1)
    }
}
