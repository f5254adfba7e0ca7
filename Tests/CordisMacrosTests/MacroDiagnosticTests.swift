import Testing

@Suite("Macro diagnostics")
struct MacroDiagnosticTests {
    @Test func pluginOnAStructIsAnError() {
        let source = """
            @CordisActor @Plugin
            struct Ticker {
            }
            """
        let result = expandCordisMacros(in: source)
        #expect(result.diagnostics == [
            ExpectedDiagnostic("@Plugin can only be attached to a final class", line: 1, column: 14),
        ])
        #expect(!result.expanded.contains("ctx"))
        #expect(!result.expanded.contains("extension"))
    }

    @Test func serviceOnAnActorIsAnError() {
        let result = expandCordisMacros(
            in: """
            @Service(ClockKey.self)
            actor ClockService {
            }
            """)
        #expect(result.diagnostics == [
            ExpectedDiagnostic("@Service can only be attached to a final class", line: 1, column: 1),
        ])
    }

    @Test func aNonFinalClassIsAnErrorWithAFixItAddingFinal() {
        let source = """
            @CordisActor @Plugin
            public class Ticker {
            }
            """
        let result = expandCordisMacros(in: source)
        #expect(result.diagnostics == [
            ExpectedDiagnostic(
                "@Plugin requires a final class; add 'final'", line: 1, column: 14, fixIt: "add 'final'",
                fixedSource: """
                    @CordisActor @Plugin
                    public final class Ticker {
                    }
                    """),
        ])
        #expect(!result.expanded.contains("extension"))
    }

    @Test func aClassWithoutCordisActorIsAnErrorWithAFixItAddingIt() {
        let source = """
            @Plugin
            final class Ticker {
            }
            """
        let result = expandCordisMacros(in: source)
        #expect(result.diagnostics == [
            ExpectedDiagnostic(
                "@Plugin requires '@CordisActor' on the class: plugins run on the Cordis global actor",
                line: 1, column: 1, fixIt: "add '@CordisActor'",
                fixedSource: """
                    @CordisActor @Plugin
                    final class Ticker {
                    }
                    """),
        ])
        #expect(!result.expanded.contains("extension"))
    }

    /// Ports cordis-ios MacroExpansionTests "diagnoses an existing ctx or config".
    @Test func aPluginThatDeclaresItsOwnCtxOrConfigIsAnError() {
        for (macro, member) in [("@Plugin", "let ctx: Context"), ("@Service(ClockKey.self)", "var config: Int = 0")] {
            let result = expandCordisMacros(
                in: """
                @CordisActor \(macro)
                final class Greeter {
                    \(member)
                }
                """)
            let name = macro.hasPrefix("@Plugin") ? "Plugin" : "Service"
            #expect(result.diagnostics == [
                ExpectedDiagnostic(
                    "@\(name) generates 'ctx'/'config'; remove the existing declaration", line: 3, column: 5),
            ])
            #expect(!result.expanded.contains("init(ctx:"))
        }
    }

    @Test func pluginAndServiceOnOneClassIsOneError() {
        let result = expandCordisMacros(
            in: """
            @CordisActor @Plugin @Service(ClockKey.self)
            final class ClockService {
            }
            """)
        #expect(result.diagnostics == [
            ExpectedDiagnostic(
                "use either @Plugin or @Service, not both: @Service already makes the class a plugin",
                line: 1, column: 22),
        ])
        #expect(!result.expanded.contains("ctx"))
    }

    @Test func serviceWithoutAKeyTypeIsAnError() {
        let result = expandCordisMacros(
            in: """
            @CordisActor @Service("clock")
            final class ClockService {
            }
            """)
        #expect(result.diagnostics == [
            ExpectedDiagnostic(
                "@Service takes a service key type, e.g. @Service(ClockKey.self)", line: 1, column: 14),
        ])
    }

    @Test func injectWithoutATypeIsAnError() {
        let result = expandCordisMacros(
            in: """
            @CordisActor @Plugin
            final class Greeter {
                @Inject(ClockKey.self) var clock
            }
            """)
        #expect(result.diagnostics == [
            ExpectedDiagnostic(
                "@Inject needs an explicit type, e.g. '@Inject(ClockKey.self) var clock: ClockService'",
                line: 3, column: 32),
        ])
    }

    @Test func injectOnALetIsAnErrorWithAFixItMakingItAVar() {
        let result = expandCordisMacros(
            in: """
            @CordisActor @Plugin
            final class Greeter {
                @Inject(ClockKey.self) let clock: ClockService
            }
            """)
        #expect(result.diagnostics == [
            ExpectedDiagnostic(
                "@Inject requires 'var'", line: 3, column: 28, fixIt: "replace 'let' with 'var'",
                fixedSource: """
                    @CordisActor @Plugin
                    final class Greeter {
                        @Inject(ClockKey.self) var clock: ClockService
                    }
                    """),
        ])
    }

    @Test func injectWithAnInitialValueIsAnErrorWithAFixItRemovingIt() {
        let result = expandCordisMacros(
            in: """
            @CordisActor @Plugin
            final class Greeter {
                @Inject(ClockKey.self) var clock: ClockService = ClockService()
            }
            """)
        #expect(result.diagnostics == [
            ExpectedDiagnostic(
                "@Inject property cannot have an initial value", line: 3, column: 52,
                fixIt: "remove the initial value",
                fixedSource: """
                    @CordisActor @Plugin
                    final class Greeter {
                        @Inject(ClockKey.self) var clock: ClockService
                    }
                    """),
        ])
    }

    @Test func injectWhoseArgumentIsNotAKeyTypeIsAnError() {
        let result = expandCordisMacros(
            in: """
            @CordisActor @Plugin
            final class Greeter {
                @Inject("clock") var clock: ClockService
            }
            """)
        #expect(result.diagnostics == [
            ExpectedDiagnostic(
                "@Inject takes a service key type, e.g. @Inject(ClockKey.self)", line: 3, column: 13),
        ])
        #expect(result.expanded.contains("injects: [Cordis.Dependency] = []"))
    }

    @Test func optionalInjectOfANonOptionalTypeIsAnError() {
        let result = expandCordisMacros(
            in: """
            @CordisActor @Plugin
            final class Greeter {
                @Inject(ClockKey.self, optional: true) var clock: ClockService
            }
            """)
        #expect(result.diagnostics == [
            ExpectedDiagnostic(
                "@Inject(..., optional: true) needs an optional type, e.g. 'var clock: ClockService?'",
                line: 3, column: 55),
        ])
    }

    @Test func injectOutsideAPluginClassIsAnError() {
        let result = expandCordisMacros(
            in: """
            final class Greeter {
                @Inject(ClockKey.self) var clock: ClockService
            }
            """)
        #expect(result.diagnostics == [
            ExpectedDiagnostic(
                "@Inject can only be used inside a class marked @Plugin or @Service", line: 2, column: 5),
        ])
    }
}
