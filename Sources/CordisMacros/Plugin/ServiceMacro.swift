import SwiftDiagnostics
import SwiftSyntax
import SwiftSyntaxMacros

/// `@Service(Key.self)`: makes a final `@CordisActor` class a plugin that provides itself as the
/// service `Key`.
///
/// Generates everything `@Plugin` does, plus `typealias Key`, `provides` (`[Key.name]`), `provisions()`
/// (the instance itself under `Key`) and the `Cordis.ServicePlugin` conformance (cordis-ios's
/// `setup(_:)` and `check()`). A class must not carry both `@Plugin` and `@Service`; one that declares
/// both `apply(_:)` and `setup(_:)` is warned that `apply(_:)` runs and `setup(_:)` never does.
public struct ServiceMacro: MemberMacro, ExtensionMacro {
    /// Generates the plugin and provision members inside the class.
    public static func expansion(
        of node: AttributeSyntax, providingMembersOf declaration: some DeclGroupSyntax,
        conformingTo protocols: [TypeSyntax], in context: some MacroExpansionContext
    ) throws -> [DeclSyntax] {
        guard let checked = PluginExpansion.check(
            .service, node: node, declaration: declaration, report: context.diagnose)
        else { return [] }
        let members = checked.declaration.memberBlock.members
        if !PluginExpansion.instanceMethods(named: "apply", in: members).isEmpty,
           let setup = PluginExpansion.instanceMethods(named: "setup", in: members).first {
            context.diagnose(Diagnostic(
                node: setup.name, message: MacroDiagnostic.applyAndSetup(checked.declaration.name.text)))
        }
        return PluginExpansion.members(of: checked)
    }

    /// Generates `extension Type: Cordis.ServicePlugin {}`; reports nothing (the member role does).
    public static func expansion(
        of node: AttributeSyntax, attachedTo declaration: some DeclGroupSyntax,
        providingExtensionsOf type: some TypeSyntaxProtocol, conformingTo protocols: [TypeSyntax],
        in context: some MacroExpansionContext
    ) throws -> [ExtensionDeclSyntax] {
        let checked = PluginExpansion.check(.service, node: node, declaration: declaration, report: { _ in })
        return try PluginExpansion.conformance(.service, of: checked, type: type, protocols: protocols)
    }
}
