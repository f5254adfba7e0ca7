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

                typealias Config = Cordis.EmptyConfig

                static let provides: [String] = [ClockKey.name]

                func provisions() -> [Cordis.ServiceProvision] {
                    [Cordis.ServiceProvision(ClockKey.self, self)]
                }
            }

            extension ClockService: Cordis.Plugin {
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

                public typealias Config = Cordis.EmptyConfig

                public static let provides: [String] = [StoreKey.name]

                public func provisions() -> [Cordis.ServiceProvision] {
                    [Cordis.ServiceProvision(StoreKey.self, self)]
                }
            }

            extension Store: Cordis.Plugin {
            }
            """)
    }
}
