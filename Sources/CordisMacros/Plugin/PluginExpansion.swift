import SwiftDiagnostics
import SwiftSyntax
import SwiftSyntaxBuilder
import SwiftSyntaxMacros

/// What `@Plugin` and `@Service` share: checking the class and generating its plugin members and
/// its `Cordis.Plugin` conformance.
enum PluginExpansion {
    /// Which of the two class macros is being expanded.
    enum Flavour {
        case plugin
        case service

        /// The attribute name, as the user writes it.
        var attributeName: String {
            switch self {
            case .plugin: "Plugin"
            case .service: "Service"
            }
        }
    }

    /// A class that passed the checks well enough to receive members.
    struct CheckedClass {
        /// The class the macro is attached to.
        let declaration: ClassDeclSyntax
        /// `Key.self` for `@Service(Key.self)`, nil for `@Plugin`.
        let serviceKey: ExprSyntax?
        /// Whether the class may also receive the conformance: it is final and on `@CordisActor`.
        let conformable: Bool
    }

    /// Checks the declaration `node` is attached to, reporting misuse through `report`, and returns the
    /// class when members can be generated.
    static func check(
        _ flavour: Flavour, node: AttributeSyntax, declaration: some DeclGroupSyntax,
        report: (Diagnostic) -> Void
    ) -> CheckedClass? {
        guard let classDeclaration = declaration.as(ClassDeclSyntax.self) else {
            report(Diagnostic(node: node, message: MacroDiagnostic.notAClass(flavour.attributeName)))
            return nil
        }
        let attributes = classDeclaration.attributes
        if attributes.contains(cordis: "Plugin") && attributes.contains(cordis: "Service") {
            // Reported once, by @Service; @Plugin steps aside silently.
            if flavour == .service {
                report(Diagnostic(node: node, message: MacroDiagnostic.pluginAndService))
            }
            return nil
        }
        if let existing = existingGeneratedMember(in: classDeclaration.memberBlock.members) {
            // The class would receive a second `ctx` or `config`: the compiler's "invalid redeclaration"
            // would not say why, so the macro says it (as cordis-ios's does) and generates nothing.
            report(Diagnostic(node: existing, message: MacroDiagnostic.existingMember(flavour.attributeName)))
            return nil
        }
        var serviceKey: ExprSyntax?
        if flavour == .service {
            guard let key = node.serviceKeyArgument else {
                report(Diagnostic(node: node, message: MacroDiagnostic.serviceKeyExpected))
                return nil
            }
            serviceKey = key
        }
        var conformable = true
        if !classDeclaration.modifiers.contains(where: { $0.name.tokenKind == .keyword(.final) }) {
            conformable = false
            report(finalFixIt(flavour, node: node, declaration: classDeclaration))
        }
        if !attributes.contains(cordis: "CordisActor") {
            conformable = false
            report(globalActorFixIt(flavour, node: node, declaration: classDeclaration))
        }
        return CheckedClass(declaration: classDeclaration, serviceKey: serviceKey, conformable: conformable)
    }

    /// The members `@Plugin` (and `@Service`, which adds its provision) generate inside the class.
    static func members(of checked: CheckedClass) -> [DeclSyntax] {
        let access = accessPrefix(of: checked.declaration)
        let injected = injectedDependencies(in: checked.declaration.memberBlock.members)
        let injects = injected.map(\.dependencyExpression).joined(separator: ", ")
        // cordis-ios's `inject`: the required services' keys, as its `@Plugin` writes them (an optional
        // `@Inject` is this package's own and stays in `injects` only).
        let inject = injected.filter { !$0.optional }.map(\.key.trimmedDescription).joined(separator: ", ")
        var members: [DeclSyntax] = [
            "\(raw: access)let ctx: Cordis.Context",
            "\(raw: access)let config: Config",
            """
            \(raw: access)init(ctx: Cordis.Context, config: Config) {
                self.ctx = ctx
                self.config = config
            }
            """,
            "\(raw: access)static let injects: [Cordis.Dependency] = [\(raw: injects)]",
        ]
        if !declaresProperty(named: "inject", in: checked.declaration.memberBlock.members) {
            members.append("\(raw: access)static var inject: [any Cordis.ServiceKey.Type] { [\(raw: inject)] }")
        }
        if !declaresConfig(checked.declaration.memberBlock.members) {
            members.append("\(raw: access)typealias Config = Cordis.EmptyConfig")
        }
        if let key = checked.serviceKey {
            let keyType = key.as(MemberAccessExprSyntax.self)?.base?.trimmed ?? key.trimmed
            if !declaresType(named: "Key", in: checked.declaration.memberBlock.members) {
                members.append("\(raw: access)typealias Key = \(keyType)")
            }
            members.append("\(raw: access)static let provides: [String] = [\(keyType).name]")
            members.append(
                """
                \(raw: access)func provisions() -> [Cordis.ServiceProvision] {
                    [Cordis.ServiceProvision(\(key.trimmed), self)]
                }
                """)
        }
        return members
    }

    /// `public ` for a public or open class, `package ` for a package one, `fileprivate ` for a private
    /// or fileprivate one, and nothing for an internal one, so the members match the class.
    static func accessPrefix(of declaration: ClassDeclSyntax) -> String {
        for modifier in declaration.modifiers where modifier.detail == nil {
            switch modifier.name.tokenKind {
            case .keyword(.public), .keyword(.open): return "public "
            case .keyword(.package): return "package "
            case .keyword(.private), .keyword(.fileprivate): return "fileprivate "
            default: continue
            }
        }
        return ""
    }

    /// The class's member declarations, those inside `#if` clauses (every clause) included, in source
    /// order: what every check and generated list below looks at.
    static func declarations(in members: MemberBlockItemListSyntax) -> [DeclSyntax] {
        var found: [DeclSyntax] = []
        for item in members {
            if let ifConfig = item.decl.as(IfConfigDeclSyntax.self) {
                for clause in ifConfig.clauses {
                    if case .decls(let nested) = clause.elements { found += declarations(in: nested) }
                }
            } else {
                found.append(item.decl)
            }
        }
        return found
    }

    /// The `@Inject` arguments of the class's properties, in source order, skipping unreadable ones (which
    /// `@Inject` itself reports).
    static func injectedDependencies(in members: MemberBlockItemListSyntax) -> [InjectArguments] {
        declarations(in: members).compactMap { decl in
            guard let attribute = decl.as(VariableDeclSyntax.self)?.attributes.first(cordis: "Inject"),
                  case .success(let arguments) = InjectArguments.read(attribute)
            else { return nil }
            return arguments
        }
    }

    /// Whether the class declares its own member type named `Config`.
    static func declaresConfig(_ members: MemberBlockItemListSyntax) -> Bool {
        declaresType(named: "Config", in: members)
    }

    /// The `extension Type: Cordis.Plugin {}` (or `Cordis.ServicePlugin` for `@Service`) the class
    /// receives, or none when the compiler asks for no conformance or the class was found unfit.
    static func conformance(
        _ flavour: Flavour, of checked: CheckedClass?, type: some TypeSyntaxProtocol, protocols: [TypeSyntax]
    ) throws -> [ExtensionDeclSyntax] {
        guard let checked, checked.conformable, !protocols.isEmpty else { return [] }
        let name = flavour == .service ? "ServicePlugin" : "Plugin"
        return [try ExtensionDeclSyntax("extension \(type.trimmed): Cordis.\(raw: name) {}")]
    }

    /// The instance methods named `name` the class declares.
    static func instanceMethods(named name: String, in members: MemberBlockItemListSyntax) -> [FunctionDeclSyntax] {
        declarations(in: members).compactMap { decl in
            guard let function = decl.as(FunctionDeclSyntax.self), function.name.text == name,
                  !function.modifiers.contains(where: {
                      $0.name.tokenKind == .keyword(.static) || $0.name.tokenKind == .keyword(.class)
                  })
            else { return nil }
            return function
        }
    }

    /// The first declaration of a `ctx` or `config` property in the class.
    static func existingGeneratedMember(in members: MemberBlockItemListSyntax) -> Syntax? {
        declarations(in: members).first { declaresProperty(named: ["ctx", "config"], $0) }.map(Syntax.init)
    }

    /// Whether the class declares a property named `name`.
    static func declaresProperty(named name: String, in members: MemberBlockItemListSyntax) -> Bool {
        declarations(in: members).contains { declaresProperty(named: [name], $0) }
    }

    /// Whether `decl` declares a property with one of `names`.
    private static func declaresProperty(named names: Set<String>, _ decl: DeclSyntax) -> Bool {
        decl.as(VariableDeclSyntax.self)?.bindings.contains {
            $0.pattern.as(IdentifierPatternSyntax.self).map { names.contains($0.identifier.text) } ?? false
        } ?? false
    }

    /// Whether the class declares its own member type named `typeName`.
    static func declaresType(named typeName: String, in members: MemberBlockItemListSyntax) -> Bool {
        declarations(in: members).contains { decl in
            let name: TokenSyntax? =
                decl.as(StructDeclSyntax.self)?.name ?? decl.as(EnumDeclSyntax.self)?.name
                ?? decl.as(ClassDeclSyntax.self)?.name ?? decl.as(ActorDeclSyntax.self)?.name
                ?? decl.as(TypeAliasDeclSyntax.self)?.name
            return name?.text == typeName
        }
    }

    /// The "add 'final'" error with its fix-it, which inserts `final ` before `class`.
    private static func finalFixIt(
        _ flavour: Flavour, node: AttributeSyntax, declaration: ClassDeclSyntax
    ) -> Diagnostic {
        let classKeyword = declaration.classKeyword
        let position = classKeyword.positionAfterSkippingLeadingTrivia
        return Diagnostic(
            node: node, message: MacroDiagnostic.notFinal(flavour.attributeName),
            fixIt: FixIt(message: MacroFixIt.addFinal, changes: [
                .replaceText(range: position..<position, with: "final ", in: Syntax(classKeyword)),
            ]))
    }

    /// The "requires '@CordisActor'" error with its fix-it, which inserts `@CordisActor ` before the
    /// class's first attribute.
    private static func globalActorFixIt(
        _ flavour: Flavour, node: AttributeSyntax, declaration: ClassDeclSyntax
    ) -> Diagnostic {
        let attributes = declaration.attributes
        let position = attributes.positionAfterSkippingLeadingTrivia
        return Diagnostic(
            node: node, message: MacroDiagnostic.missingGlobalActor(flavour.attributeName),
            fixIt: FixIt(message: MacroFixIt.addCordisActor, changes: [
                .replaceText(range: position..<position, with: "@CordisActor ", in: Syntax(attributes)),
            ]))
    }
}
