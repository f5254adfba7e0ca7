import SwiftDiagnostics
import SwiftSyntax
import SwiftSyntaxMacros

/// `@Remote`: makes a protocol usable across nodes by generating, next to it, `<Name>Proxy` (a struct
/// that sends every call through a `Cordis.RemoteEndpoint`) and `<Name>Remote` (the
/// `Cordis.RemoteInterface`: name, version, method list, proxy factory and dispatcher).
///
/// Every requirement must be an instance method that is `async throws`, not generic, with no
/// `inout` or variadic parameter, and method names must be distinct (calls are routed by name). The
/// protocol may inherit only `Sendable`, since the proxy implements just the requirements written
/// here. Whether argument and result types are `Codable` is left to the compiler: the generated code
/// calls `RemoteCoding`'s generic functions, which require `Encodable` and `Decodable`, so a
/// non-Codable type fails to compile at the generated call. The peers get the protocol's access level.
public struct RemoteMacro: PeerMacro {
    /// Generates the proxy and the interface descriptor, or reports why the declaration cannot be remote.
    public static func expansion(
        of node: AttributeSyntax, providingPeersOf declaration: some DeclSyntaxProtocol,
        in context: some MacroExpansionContext
    ) throws -> [DeclSyntax] {
        guard let proto = declaration.as(ProtocolDeclSyntax.self) else {
            context.diagnose(Diagnostic(node: node, message: MacroDiagnostic.remoteNotAProtocol))
            return []
        }
        guard let methods = check(proto, report: context.diagnose) else { return [] }
        let interface = RemoteInterfaceExpansion(
            name: proto.name.text, access: accessPrefix(of: proto), methods: methods)
        return [interface.proxy, interface.descriptor]
    }

    /// Reports every requirement that cannot be remote; the methods when there was none.
    static func check(_ proto: ProtocolDeclSyntax, report: (Diagnostic) -> Void) -> [RemoteMethod]? {
        var fine = true
        if let primary = proto.primaryAssociatedTypeClause {
            fine = false
            report(Diagnostic(node: primary, message: MacroDiagnostic.remoteRequirementNotAMethod("associated type")))
        }
        let inherited = proto.inheritanceClause?.inheritedTypes ?? []
        if !inherited.contains(where: { ["Sendable", "Swift.Sendable"].contains($0.type.compactText) }) {
            fine = false
            report(Diagnostic(node: proto.name, message: MacroDiagnostic.remoteNotSendable))
        }
        for inherited in inherited {
            let text = inherited.type.compactText
            if text != "Sendable" && text != "Swift.Sendable" {
                fine = false
                report(Diagnostic(node: inherited.type, message: MacroDiagnostic.remoteInheritance))
            }
        }
        var methods: [RemoteMethod] = []
        var seen: Set<String> = []
        for item in proto.memberBlock.members {
            guard let function = item.decl.as(FunctionDeclSyntax.self) else {
                fine = false
                report(Diagnostic(
                    node: item.decl, message: MacroDiagnostic.remoteRequirementNotAMethod(kind(of: item.decl))))
                continue
            }
            guard checkMethod(function, report: report) else {
                fine = false
                continue
            }
            let method = RemoteMethod(function)
            if !seen.insert(method.wireName).inserted {
                fine = false
                report(Diagnostic(node: function.name, message: MacroDiagnostic.remoteOverload(method.wireName)))
                continue
            }
            methods.append(method)
        }
        return fine ? methods : nil
    }

    /// Reports what makes one method requirement unfit; true when nothing does.
    private static func checkMethod(_ function: FunctionDeclSyntax, report: (Diagnostic) -> Void) -> Bool {
        if function.modifiers.contains(where: {
            $0.name.tokenKind == .keyword(.static) || $0.name.tokenKind == .keyword(.class)
        }) {
            report(Diagnostic(node: function, message: MacroDiagnostic.remoteRequirementNotAMethod("static method")))
            return false
        }
        var fine = true
        let effects = function.signature.effectSpecifiers
        let isAsync = effects?.asyncSpecifier?.tokenKind == .keyword(.async)
        let throwsClause = effects?.throwsClause
        let isThrows = throwsClause?.throwsSpecifier.tokenKind == .keyword(.throws) && throwsClause?.type == nil
        if !isAsync || !isThrows {
            fine = false
            report(Diagnostic(node: function.name, message: MacroDiagnostic.remoteNotAsyncThrows(function.name.text)))
        }
        if let generics = function.genericParameterClause {
            fine = false
            report(Diagnostic(node: generics, message: MacroDiagnostic.remoteGenericMethod))
        } else if let whereClause = function.genericWhereClause {
            fine = false
            report(Diagnostic(node: whereClause, message: MacroDiagnostic.remoteGenericMethod))
        }
        for parameter in function.signature.parameterClause.parameters {
            let tokens = parameter.type.tokens(viewMode: .sourceAccurate)
            if tokens.contains(where: { $0.tokenKind == .keyword(.inout) }) {
                fine = false
                report(Diagnostic(node: parameter, message: MacroDiagnostic.remoteInoutParameter))
            } else if parameter.ellipsis != nil {
                fine = false
                report(Diagnostic(node: parameter, message: MacroDiagnostic.remoteVariadicParameter))
            } else if let opaque = parameter.type.as(SomeOrAnyTypeSyntax.self),
                      opaque.someOrAnySpecifier.tokenKind == .keyword(.some) {
                fine = false
                report(Diagnostic(node: parameter.type, message: MacroDiagnostic.remoteGenericMethod))
            }
        }
        return fine
    }

    /// What a requirement that is not a method is, for the diagnostic.
    private static func kind(of decl: DeclSyntax) -> String {
        if let variable = decl.as(VariableDeclSyntax.self) {
            let isStatic = variable.modifiers.contains {
                $0.name.tokenKind == .keyword(.static) || $0.name.tokenKind == .keyword(.class)
            }
            return isStatic ? "static property" : "property"
        }
        if decl.is(SubscriptDeclSyntax.self) { return "subscript" }
        if decl.is(AssociatedTypeDeclSyntax.self) { return "associated type" }
        if decl.is(InitializerDeclSyntax.self) { return "initializer" }
        if decl.is(TypeAliasDeclSyntax.self) { return "type alias" }
        if decl.is(IfConfigDeclSyntax.self) { return "#if block" }
        return "declaration"
    }

    /// `public ` for a public protocol, `package ` for a package one, `fileprivate ` for a private or
    /// fileprivate one, nothing for an internal one, so the peers match the protocol.
    static func accessPrefix(of proto: ProtocolDeclSyntax) -> String {
        for modifier in proto.modifiers where modifier.detail == nil {
            switch modifier.name.tokenKind {
            case .keyword(.public), .keyword(.open): return "public "
            case .keyword(.package): return "package "
            case .keyword(.private), .keyword(.fileprivate): return "fileprivate "
            default: continue
            }
        }
        return ""
    }
}
