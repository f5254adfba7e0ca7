import SwiftDiagnostics
import SwiftSyntax

/// An error the Cordis macros report on misuse, with a stable code and the text the user sees.
///
/// The codes are the diagnostic ids (`CordisMacros.<code>`); the messages are part of the macro
/// contract (`notes/macro-contract.md`) and are checked word for word by the tests.
public struct MacroDiagnostic: DiagnosticMessage, Equatable {
    /// The kind of misuse, an extendable set of static values.
    public struct Code: Hashable, Sendable {
        /// The code's name, used as the diagnostic id.
        public let name: String

        /// Creates a code with the given name.
        public init(_ name: String) { self.name = name }

        /// `@Plugin` or `@Service` on something that is not a class.
        public static let notAClass = Code("notAClass")
        /// `@Plugin` or `@Service` on a class that is not `final`.
        public static let notFinal = Code("notFinal")
        /// `@Plugin` or `@Service` on a class without `@CordisActor`.
        public static let missingGlobalActor = Code("missingGlobalActor")
        /// Both `@Plugin` and `@Service` on one class.
        public static let pluginAndService = Code("pluginAndService")
        /// `@Service` without a `Key.self` argument.
        public static let serviceKeyExpected = Code("serviceKeyExpected")
        /// `@Inject` without a `Key.self` argument.
        public static let injectKeyExpected = Code("injectKeyExpected")
        /// `@Inject` with an `optional:` argument that is not `true` or `false`.
        public static let optionalFlagNotLiteral = Code("optionalFlagNotLiteral")
        /// `@Inject` on something that is not a single stored property.
        public static let notAProperty = Code("notAProperty")
        /// `@Inject` on a `let`.
        public static let letProperty = Code("letProperty")
        /// `@Inject` on a `static` or `class` property.
        public static let staticProperty = Code("staticProperty")
        /// `@Inject` on a property without a type annotation.
        public static let missingType = Code("missingType")
        /// `@Inject` on a property with an initial value.
        public static let initialValue = Code("initialValue")
        /// `@Inject` on a property that already has accessors.
        public static let hasAccessors = Code("hasAccessors")
        /// `@Inject(..., optional: true)` on a property whose type is not optional.
        public static let optionalTypeExpected = Code("optionalTypeExpected")
        /// `@Inject` inside a type that is not a `@Plugin` or `@Service` class.
        public static let outsidePlugin = Code("outsidePlugin")
        /// `@Remote` on something that is not a protocol.
        public static let remoteNotAProtocol = Code("remoteNotAProtocol")
        /// A `@Remote` protocol requirement that is not an instance method.
        public static let remoteRequirementNotAMethod = Code("remoteRequirementNotAMethod")
        /// A `@Remote` method that is not `async throws`.
        public static let remoteNotAsyncThrows = Code("remoteNotAsyncThrows")
        /// A generic `@Remote` method (generic parameters, `where`, or a `some` parameter).
        public static let remoteGenericMethod = Code("remoteGenericMethod")
        /// An `inout` parameter of a `@Remote` method.
        public static let remoteInoutParameter = Code("remoteInoutParameter")
        /// A variadic parameter of a `@Remote` method.
        public static let remoteVariadicParameter = Code("remoteVariadicParameter")
        /// Two `@Remote` methods with the same name.
        public static let remoteOverload = Code("remoteOverload")
        /// A `@Remote` protocol inheriting something other than `Sendable`.
        public static let remoteInheritance = Code("remoteInheritance")
        /// A `@Remote` protocol that does not inherit `Sendable`.
        public static let remoteNotSendable = Code("remoteNotSendable")
        /// A `@Service` class declaring both `apply(_:)` and `setup(_:)` (a warning: `apply` runs).
        public static let applyAndSetup = Code("applyAndSetup")
        /// A `@Plugin` or `@Service` class that declares its own `ctx` or `config`, which the macro generates.
        public static let existingMember = Code("existingMember")
    }

    /// What went wrong.
    public let code: Code
    /// The text shown to the user: what happened and what to do.
    public let message: String
    /// `.error` for misuse that stops the build; `.warning` for code that builds but may not do what
    /// its author meant.
    public let severity: DiagnosticSeverity

    /// Creates a diagnostic with the given code and message (an error unless `severity` says otherwise).
    public init(_ code: Code, _ message: String, severity: DiagnosticSeverity = .error) {
        self.code = code
        self.message = message
        self.severity = severity
    }

    /// The diagnostic id: the `CordisMacros` domain and the code's name.
    public var diagnosticID: MessageID { MessageID(domain: "CordisMacros", id: code.name) }
}

extension MacroDiagnostic {
    static func notAClass(_ macro: String) -> MacroDiagnostic {
        MacroDiagnostic(.notAClass, "@\(macro) can only be attached to a final class")
    }

    static func notFinal(_ macro: String) -> MacroDiagnostic {
        MacroDiagnostic(.notFinal, "@\(macro) requires a final class; add 'final'")
    }

    static func missingGlobalActor(_ macro: String) -> MacroDiagnostic {
        MacroDiagnostic(
            .missingGlobalActor,
            "@\(macro) requires '@CordisActor' on the class: plugins run on the Cordis global actor")
    }

    static let pluginAndService = MacroDiagnostic(
        .pluginAndService, "use either @Plugin or @Service, not both: @Service already makes the class a plugin")

    static func existingMember(_ macro: String) -> MacroDiagnostic {
        MacroDiagnostic(.existingMember, "@\(macro) generates 'ctx'/'config'; remove the existing declaration")
    }

    static func applyAndSetup(_ className: String) -> MacroDiagnostic {
        MacroDiagnostic(
            .applyAndSetup,
            "\(className) declares both apply(_:) and setup(_:): apply(_:) runs and setup(_:) is never called "
                + "(the service is provided once apply(_:) returns); move the start-up into setup(_:) and "
                + "remove apply(_:) to have the service provided before it runs",
            severity: .warning)
    }

    static let serviceKeyExpected = MacroDiagnostic(
        .serviceKeyExpected, "@Service takes a service key type, e.g. @Service(ClockKey.self)")

    static let injectKeyExpected = MacroDiagnostic(
        .injectKeyExpected, "@Inject takes a service key type, e.g. @Inject(ClockKey.self)")

    static let optionalFlagNotLiteral = MacroDiagnostic(
        .optionalFlagNotLiteral, "@Inject's 'optional:' argument must be the literal 'true' or 'false'")

    static let notAProperty = MacroDiagnostic(
        .notAProperty, "@Inject can only be attached to a single 'var' property")

    static let letProperty = MacroDiagnostic(.letProperty, "@Inject requires 'var'")

    static let staticProperty = MacroDiagnostic(
        .staticProperty, "@Inject cannot be attached to a static property: services are injected per plugin instance")

    static let missingType = MacroDiagnostic(
        .missingType, "@Inject needs an explicit type, e.g. '@Inject(ClockKey.self) var clock: ClockService'")

    static let initialValue = MacroDiagnostic(.initialValue, "@Inject property cannot have an initial value")

    static let hasAccessors = MacroDiagnostic(
        .hasAccessors, "@Inject property cannot declare its own accessors: the macro provides the getter")

    static let optionalTypeExpected = MacroDiagnostic(
        .optionalTypeExpected,
        "@Inject(..., optional: true) needs an optional type, e.g. 'var clock: ClockService?'")

    static let outsidePlugin = MacroDiagnostic(
        .outsidePlugin, "@Inject can only be used inside a class marked @Plugin or @Service")

    static let remoteNotAProtocol = MacroDiagnostic(.remoteNotAProtocol, "@Remote can only be attached to a protocol")

    static func remoteRequirementNotAMethod(_ kind: String) -> MacroDiagnostic {
        MacroDiagnostic(
            .remoteRequirementNotAMethod,
            "@Remote protocols can only declare instance methods; move this \(kind) to another protocol")
    }

    static func remoteNotAsyncThrows(_ method: String) -> MacroDiagnostic {
        MacroDiagnostic(
            .remoteNotAsyncThrows,
            "@Remote method '\(method)' must be 'async throws': a remote call waits for the network and can fail")
    }

    static let remoteGenericMethod = MacroDiagnostic(
        .remoteGenericMethod, "@Remote methods cannot be generic: arguments and results need concrete Codable types")

    static let remoteInoutParameter = MacroDiagnostic(
        .remoteInoutParameter, "@Remote method parameters cannot be 'inout': arguments travel by value")

    static let remoteVariadicParameter = MacroDiagnostic(
        .remoteVariadicParameter, "@Remote method parameters cannot be variadic; take an array instead")

    static func remoteOverload(_ method: String) -> MacroDiagnostic {
        MacroDiagnostic(
            .remoteOverload, "@Remote methods need distinct names: calls are routed by name and '\(method)' is declared twice")
    }

    static let remoteNotSendable = MacroDiagnostic(
        .remoteNotSendable,
        "@Remote protocols must inherit 'Sendable': providers run on CordisActor and proxies are called from any task")

    static let remoteInheritance = MacroDiagnostic(
        .remoteInheritance,
        "@Remote protocols can only inherit 'Sendable': the proxy implements only the requirements declared here")
}

/// The text of a fix-it the Cordis macros offer.
struct MacroFixIt: FixItMessage {
    /// The text shown next to the fix-it.
    let message: String
    /// The fix-it's id in the `CordisMacros` domain.
    let fixItID: MessageID

    init(_ id: String, _ message: String) {
        self.message = message
        self.fixItID = MessageID(domain: "CordisMacros", id: id)
    }

    static let addFinal = MacroFixIt("addFinal", "add 'final'")
    static let addCordisActor = MacroFixIt("addCordisActor", "add '@CordisActor'")
    static let useVar = MacroFixIt("useVar", "replace 'let' with 'var'")
    static let removeInitialValue = MacroFixIt("removeInitialValue", "remove the initial value")
}
