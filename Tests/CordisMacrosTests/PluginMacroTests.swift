import CordisMacros
import SwiftSyntaxMacroExpansion
import Testing

@Suite("PluginMacro")
struct PluginMacroTests {
    @Test func aPluginWithoutConfigOrInjectsGetsTheEmptyConfig() {
        assertMacroExpansion(
            """
            @CordisActor @Plugin
            final class Ticker {
                func apply(_ scope: EffectScope) async throws {}
            }
            """,
            expandsTo: """
            @CordisActor
            final class Ticker {
                func apply(_ scope: EffectScope) async throws {}

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
            }

            extension Ticker: Cordis.Plugin {
            }
            """)
    }

    @Test func aPluginThatDeclaresItsConfigKeepsIt() {
        assertMacroExpansion(
            """
            @CordisActor @Plugin
            final class Counter {
                struct Config: Decodable {
                    var start: Int
                }
            }
            """,
            expandsTo: """
            @CordisActor
            final class Counter {
                struct Config: Decodable {
                    var start: Int
                }

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
            }

            extension Counter: Cordis.Plugin {
            }
            """)
    }

    @Test func aConfigTypealiasCountsAsTheConfig() {
        let result = expandCordisMacros(
            in: """
            @CordisActor @Plugin
            final class Counter {
                typealias Config = CounterSettings
            }
            """)
        #expect(!result.expanded.contains("Cordis.EmptyConfig"))
        #expect(result.diagnostics.isEmpty)
    }

    @Test func aPluginWithOneInjectListsItsDependency() {
        assertMacroExpansion(
            """
            @CordisActor @Plugin
            final class Greeter {
                @Inject(ClockKey.self) var clock: ClockService
            }
            """,
            expandsTo: """
            @CordisActor
            final class Greeter {
                var clock: ClockService {
                    get throws {
                        try ctx.get(ClockKey.self, property: "clock")
                    }
                }

                let ctx: Cordis.Context

                let config: Config

                init(ctx: Cordis.Context, config: Config) {
                    self.ctx = ctx
                    self.config = config
                }

                static let injects: [Cordis.Dependency] = [Cordis.Dependency(ClockKey.self)]

                static var inject: [any Cordis.ServiceKey.Type] {
                    [ClockKey.self]
                }

                typealias Config = Cordis.EmptyConfig
            }

            extension Greeter: Cordis.Plugin {
            }
            """)
    }

    @Test func aPluginWithTwoInjectsListsThemInSourceOrder() {
        assertMacroExpansion(
            """
            @CordisActor @Plugin
            final class Badge {
                @Inject(CounterKey.self) var counter: CounterService
                @Inject(Keys.Clock.self, optional: true) var clock: ClockService?
            }
            """,
            expandsTo: """
            @CordisActor
            final class Badge {
                var counter: CounterService {
                    get throws {
                        try ctx.get(CounterKey.self, property: "counter")
                    }
                }
                var clock: ClockService? {
                    get {
                        try? ctx.get(Keys.Clock.self, property: "clock")
                    }
                }

                let ctx: Cordis.Context

                let config: Config

                init(ctx: Cordis.Context, config: Config) {
                    self.ctx = ctx
                    self.config = config
                }

                static let injects: [Cordis.Dependency] = [Cordis.Dependency(CounterKey.self), Cordis.Dependency(Keys.Clock.self, optional: true)]

                static var inject: [any Cordis.ServiceKey.Type] {
                    [CounterKey.self]
                }

                typealias Config = Cordis.EmptyConfig
            }

            extension Badge: Cordis.Plugin {
            }
            """)
    }

    @Test func aPublicPluginGetsPublicMembers() {
        assertMacroExpansion(
            """
            @CordisActor @Plugin
            public final class Ticker {
            }
            """,
            expandsTo: """
            @CordisActor
            public final class Ticker {

                public let ctx: Cordis.Context

                public let config: Config

                public init(ctx: Cordis.Context, config: Config) {
                    self.ctx = ctx
                    self.config = config
                }

                public static let injects: [Cordis.Dependency] = []

                public static var inject: [any Cordis.ServiceKey.Type] {
                    []
                }

                public typealias Config = Cordis.EmptyConfig
            }

            extension Ticker: Cordis.Plugin {
            }
            """)
    }

    @Test func aPluginThatAlreadyConformsGetsNoSecondConformance() {
        var specs = cordisMacroSpecs
        specs["Plugin"] = MacroSpec(type: PluginMacro.self, conformances: [])
        let result = expandCordisMacros(
            in: """
            @CordisActor @Plugin
            final class Ticker: Plugin {
            }
            """,
            specs: specs)
        #expect(!result.expanded.contains("extension"))
        #expect(result.expanded.contains("let ctx: Cordis.Context"))
    }
}
