import SwiftDiagnostics
import SwiftSyntax
import SwiftSyntaxMacros

/// `@Service(Key.self)`: makes a final `@CordisActor` class a plugin that provides itself as the
/// service `Key`.
///
/// Generates everything `@Plugin` does, plus `provides` (`[Key.name]`) and `provisions()` (the instance
/// itself under `Key`). A class must not carry both `@Plugin` and `@Service`.
public struct ServiceMacro: MemberMacro, ExtensionMacro {
    /// Generates the plugin and provision members inside the class.
    public static func expansion(
        of node: AttributeSyntax, providingMembersOf declaration: some DeclGroupSyntax,
        conformingTo protocols: [TypeSyntax], in context: some MacroExpansionContext
    ) throws -> [DeclSyntax] {
        guard let checked = PluginExpansion.check(
            .service, node: node, declaration: declaration, report: context.diagnose)
        else { return [] }
        return PluginExpansion.members(of: checked)
    }

    /// Generates `extension Type: Cordis.Plugin {}`; reports nothing (the member role does).
    public static func expansion(
        of node: AttributeSyntax, attachedTo declaration: some DeclGroupSyntax,
        providingExtensionsOf type: some TypeSyntaxProtocol, conformingTo protocols: [TypeSyntax],
        in context: some MacroExpansionContext
    ) throws -> [ExtensionDeclSyntax] {
        let checked = PluginExpansion.check(.service, node: node, declaration: declaration, report: { _ in })
        return try PluginExpansion.conformance(of: checked, type: type, protocols: protocols)
    }
}
