import SwiftDiagnostics
import SwiftSyntax
import SwiftSyntaxMacros

/// `@Plugin`: makes a final `@CordisActor` class a Cordis plugin.
///
/// Generates `ctx`, `config`, `init(ctx:config:)`, `injects` (one dependency per `@Inject` property, in
/// source order), `typealias Config = Cordis.EmptyConfig` when the class declares no `Config`, and the
/// `Cordis.Plugin` conformance. Misuse is reported as errors on the attribute.
public struct PluginMacro: MemberMacro, ExtensionMacro {
    /// Generates the plugin members inside the class.
    public static func expansion(
        of node: AttributeSyntax, providingMembersOf declaration: some DeclGroupSyntax,
        conformingTo protocols: [TypeSyntax], in context: some MacroExpansionContext
    ) throws -> [DeclSyntax] {
        guard let checked = PluginExpansion.check(
            .plugin, node: node, declaration: declaration, report: context.diagnose)
        else { return [] }
        return PluginExpansion.members(of: checked)
    }

    /// Generates `extension Type: Cordis.Plugin {}`; reports nothing (the member role does).
    public static func expansion(
        of node: AttributeSyntax, attachedTo declaration: some DeclGroupSyntax,
        providingExtensionsOf type: some TypeSyntaxProtocol, conformingTo protocols: [TypeSyntax],
        in context: some MacroExpansionContext
    ) throws -> [ExtensionDeclSyntax] {
        let checked = PluginExpansion.check(.plugin, node: node, declaration: declaration, report: { _ in })
        return try PluginExpansion.conformance(.plugin, of: checked, type: type, protocols: protocols)
    }
}
