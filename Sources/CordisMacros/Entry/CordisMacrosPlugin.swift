import SwiftSyntaxMacros

#if CORDIS_SWIFT_SYNTAX_PACKAGE
import SwiftCompilerPlugin

/// The compiler plugin that serves the Cordis macros, built against the swift-syntax package.
@main
struct CordisMacrosPlugin: CompilerPlugin {
    /// The macros this plugin expands.
    let providingMacros: [any Macro.Type] = CordisMacrosCatalog.macros.map(\.type)
}
#else
@_spi(PluginMessage) import SwiftCompilerPluginMessageHandling

/// The compiler plugin that serves the Cordis macros, built against the toolchain's own SwiftSyntax
/// (which ships no `SwiftCompilerPlugin` module): it answers the compiler's messages on standard I/O.
@main
struct CordisMacrosPlugin {
    /// Serves expansion requests until the compiler closes the connection.
    static func main() throws {
        let connection = try StandardIOMessageConnection()
        let listener = CompilerPluginMessageListener(connection: connection, provider: CordisMacrosProvider())
        try listener.main()
    }
}

/// Resolves the macro type names the compiler asks for to the Cordis macro types.
struct CordisMacrosProvider: PluginProvider {
    /// The compiler asked for a macro this plugin does not have.
    struct UnknownMacro: Error, CustomStringConvertible {
        let moduleName: String
        let typeName: String
        var description: String { "CordisMacros has no macro '\(moduleName).\(typeName)'" }
    }

    func resolveMacro(moduleName: String, typeName: String) throws -> any Macro.Type {
        guard let entry = CordisMacrosCatalog.macros.first(where: { $0.name == typeName }) else {
            throw UnknownMacro(moduleName: moduleName, typeName: typeName)
        }
        return entry.type
    }
}
#endif

/// The macros of the `CordisMacros` plugin, by the type names the `#externalMacro` declarations use.
enum CordisMacrosCatalog {
    static var macros: [(name: String, type: any Macro.Type)] {
        [
            ("PluginMacro", PluginMacro.self),
            ("ServiceMacro", ServiceMacro.self),
            ("InjectMacro", InjectMacro.self),
            ("RemoteMacro", RemoteMacro.self),
        ]
    }
}
