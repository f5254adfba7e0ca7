import CordisMacros
import SwiftSyntaxMacroExpansion
import Testing

@Suite("InjectMacro")
struct InjectMacroTests {
    @Test func aRequiredInjectBecomesAThrowingGetterThatNamesTheProperty() {
        assertMacroExpansion(
            """
            @CordisActor @Plugin
            final class Greeter {
                @Inject(ClockKey.self) var `default`: ClockService
            }
            """,
            expandsTo: """
            @CordisActor
            final class Greeter {
                var `default`: ClockService {
                    get throws {
                        try ctx.get(ClockKey.self, property: "default")
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

    @Test func anOptionalInjectBecomesAGetterThatReturnsNilWhenTheServiceIsMissing() {
        assertMacroExpansion(
            """
            @CordisActor @Plugin
            final class Greeter {
                @Inject(ClockKey.self, optional: true) var clock: Optional<ClockService>
            }
            """,
            expandsTo: """
            @CordisActor
            final class Greeter {
                var clock: Optional<ClockService> {
                    get {
                        try? ctx.get(ClockKey.self, property: "clock")
                    }
                }

                let ctx: Cordis.Context

                let config: Config

                init(ctx: Cordis.Context, config: Config) {
                    self.ctx = ctx
                    self.config = config
                }

                static let injects: [Cordis.Dependency] = [Cordis.Dependency(ClockKey.self, optional: true)]

                static var inject: [any Cordis.ServiceKey.Type] {
                    []
                }

                typealias Config = Cordis.EmptyConfig
            }

            extension Greeter: Cordis.Plugin {
            }
            """)
    }

    @Test func anExplicitOptionalFalseIsARequiredDependency() {
        let result = expandCordisMacros(
            in: """
            @CordisActor @Plugin
            final class Greeter {
                @Inject(ClockKey.self, optional: false) var clock: ClockService
            }
            """)
        #expect(result.expanded.contains("[Cordis.Dependency(ClockKey.self)]"))
        #expect(result.expanded.contains("get throws {"))
        #expect(result.diagnostics.isEmpty)
    }

    @Test func aModuleQualifiedInjectIsListedInTheInjects() {
        let result = expandCordisMacros(
            in: """
            @CordisActor @Plugin
            final class Greeter {
                @Cordis.Inject(ClockKey.self) var clock: ClockService
            }
            """,
            specs: ["Plugin": MacroSpec(type: PluginMacro.self, conformances: ["Plugin"])])
        #expect(result.expanded.contains("[Cordis.Dependency(ClockKey.self)]"))
    }
}
