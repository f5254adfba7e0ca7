import SwiftDiagnostics
import SwiftSyntax
import SwiftSyntaxMacros

/// `@Inject(Key.self)` / `@Inject(Key.self, optional: true)`: turns a `var` of a `@Plugin` or
/// `@Service` class into a getter that reads the injected service from the plugin's context.
///
/// A required dependency's getter is `get throws` (it throws when the service is not available); an
/// optional one's getter returns nil instead and the property must have an optional type.
public struct InjectMacro: AccessorMacro {
    /// Generates the property's getter, or reports why the property cannot be injected.
    public static func expansion(
        of node: AttributeSyntax, providingAccessorsOf declaration: some DeclSyntaxProtocol,
        in context: some MacroExpansionContext
    ) throws -> [AccessorDeclSyntax] {
        guard let variable = declaration.as(VariableDeclSyntax.self),
              variable.bindings.count == 1, let binding = variable.bindings.first,
              let pattern = binding.pattern.as(IdentifierPatternSyntax.self)
        else {
            context.diagnose(Diagnostic(node: node, message: MacroDiagnostic.notAProperty))
            return []
        }
        let arguments: InjectArguments
        switch InjectArguments.read(node) {
        case .success(let read):
            arguments = read
        case .failure(.keyExpected(let at)):
            context.diagnose(Diagnostic(node: at, message: MacroDiagnostic.injectKeyExpected))
            return []
        case .failure(.optionalFlagNotLiteral(let at)):
            context.diagnose(Diagnostic(node: at, message: MacroDiagnostic.optionalFlagNotLiteral))
            return []
        }
        guard check(variable, binding: binding, arguments: arguments, node: node, in: context) else { return [] }

        let property = pattern.identifier.text.replacingBackticks
        let key = arguments.key.trimmed
        if arguments.optional {
            return [
                """
                get {
                    try? ctx.get(\(key), property: \(literal: property))
                }
                """,
            ]
        }
        return [
            """
            get throws {
                try ctx.get(\(key), property: \(literal: property))
            }
            """,
        ]
    }

    /// Reports every misuse of the property itself; true when there was none.
    private static func check(
        _ variable: VariableDeclSyntax, binding: PatternBindingSyntax, arguments: InjectArguments,
        node: AttributeSyntax, in context: some MacroExpansionContext
    ) -> Bool {
        var fine = true
        if variable.bindingSpecifier.tokenKind == .keyword(.let) {
            fine = false
            let specifier = variable.bindingSpecifier
            context.diagnose(Diagnostic(
                node: specifier, message: MacroDiagnostic.letProperty,
                fixIt: .replace(
                    message: MacroFixIt.useVar, oldNode: specifier,
                    newNode: specifier.with(\.tokenKind, .keyword(.var)))))
        }
        if variable.modifiers.contains(where: {
            $0.name.tokenKind == .keyword(.static) || $0.name.tokenKind == .keyword(.class)
        }) {
            fine = false
            context.diagnose(Diagnostic(node: node, message: MacroDiagnostic.staticProperty))
        }
        if let initializer = binding.initializer {
            fine = false
            let start = binding.typeAnnotation?.endPositionBeforeTrailingTrivia
                ?? binding.pattern.endPositionBeforeTrailingTrivia
            context.diagnose(Diagnostic(
                node: initializer, message: MacroDiagnostic.initialValue,
                fixIt: FixIt(message: MacroFixIt.removeInitialValue, changes: [
                    .replaceText(
                        range: start..<initializer.endPositionBeforeTrailingTrivia, with: "",
                        in: Syntax(initializer)),
                ])))
        }
        if let type = binding.typeAnnotation?.type {
            if arguments.optional && !type.isOptional {
                fine = false
                context.diagnose(Diagnostic(node: type, message: MacroDiagnostic.optionalTypeExpected))
            }
        } else {
            fine = false
            context.diagnose(Diagnostic(node: binding.pattern, message: MacroDiagnostic.missingType))
        }
        if binding.accessorBlock != nil {
            fine = false
            context.diagnose(Diagnostic(node: node, message: MacroDiagnostic.hasAccessors))
        }
        if let enclosing = context.lexicalContext.first, !enclosing.isPluginClass {
            fine = false
            context.diagnose(Diagnostic(node: node, message: MacroDiagnostic.outsidePlugin))
        }
        return fine
    }
}

private extension TypeSyntax {
    /// Whether the type is `T?`, `T!` or `Optional<T>`.
    var isOptional: Bool {
        if self.is(OptionalTypeSyntax.self) || self.is(ImplicitlyUnwrappedOptionalTypeSyntax.self) { return true }
        if let identifier = self.as(IdentifierTypeSyntax.self) {
            return identifier.name.text == "Optional" && identifier.genericArgumentClause != nil
        }
        if let member = self.as(MemberTypeSyntax.self) {
            return member.name.text == "Optional" && member.genericArgumentClause != nil
                && member.baseType.as(IdentifierTypeSyntax.self)?.name.text == "Swift"
        }
        return false
    }
}

private extension Syntax {
    /// Whether this lexical context is a class marked `@Plugin` or `@Service`.
    var isPluginClass: Bool {
        guard let classDeclaration = self.as(ClassDeclSyntax.self) else { return false }
        return classDeclaration.attributes.contains(cordis: "Plugin")
            || classDeclaration.attributes.contains(cordis: "Service")
    }
}

private extension String {
    /// The identifier without the backticks of a raw identifier (`` `default` `` becomes `default`).
    var replacingBackticks: String {
        hasPrefix("`") && hasSuffix("`") && count >= 2 ? String(dropFirst().dropLast()) : self
    }
}
