import SwiftSyntax
import SwiftSyntaxBuilder

/// The code `@Remote` generates for one checked protocol: the proxy struct and the interface enum.
struct RemoteInterfaceExpansion {
    /// The protocol's name.
    let name: String
    /// The access modifier of the peers, with its trailing space (empty for internal).
    let access: String
    /// The method requirements, in source order.
    let methods: [RemoteMethod]

    /// Member access for the peers' members: the protocol's, except that a fileprivate type's members
    /// are left unmarked (they cannot be more visible than the type anyway).
    private var memberAccess: String { access == "fileprivate " ? "" : access }

    /// `<Name>Proxy`: sends each call through its endpoint and decodes the result.
    var proxy: DeclSyntax {
        let members = methods.map(proxyMethod).joined(separator: "\n")
        return """
            \(raw: access)struct \(raw: name)Proxy: \(raw: name), Sendable {
                \(raw: memberAccess)let endpoint: any Cordis.RemoteEndpoint
                \(raw: memberAccess)init(endpoint: any Cordis.RemoteEndpoint) { self.endpoint = endpoint }
            \(raw: members)
            }
            """
    }

    /// `<Name>Remote`: the `RemoteInterface` descriptor with the version and the dispatcher.
    var descriptor: DeclSyntax {
        let version = InterfaceVersion.of(methods.map(\.normalisedSignature))
        let methodList = methods.isEmpty
            ? ": [String] = []" : " = [" + methods.map { "\"\($0.wireName)\"" }.joined(separator: ", ") + "]"
        let cases = methods.map(dispatchCase).joined(separator: "\n")
        let a = memberAccess
        return """
            \(raw: access)enum \(raw: name)Remote: Cordis.RemoteInterface {
                \(raw: a)typealias API = any \(raw: name)
                \(raw: a)static let name = "\(raw: name)"
                \(raw: a)static let version = "\(raw: version)"
                \(raw: a)static let methods\(raw: methodList)
                \(raw: a)static func proxy(_ endpoint: any Cordis.RemoteEndpoint) -> any \(raw: name) { \(raw: name)Proxy(endpoint: endpoint) }
                \(raw: a)static func dispatch(_ instance: any \(raw: name), method: String, arguments: Cordis.JSONObject) async throws -> Cordis.JSONValue {
                    switch method {
            \(raw: cases)
                    default: throw Cordis.RemoteCoding.unknownMethod(method, in: "\(raw: name)")
                    }
                }
            }
            """
    }

    /// One proxy method: builds the argument object, calls, decodes the result.
    private func proxyMethod(_ method: RemoteMethod) -> String {
        let parameters = method.parameters.map { parameter in
            let names = parameter.label == parameter.localName
                ? parameter.label : "\(parameter.label) \(parameter.localName)"
            return "\(names): \(parameter.type.trimmedDescription)"
        }.joined(separator: ", ")
        let result = method.result.map { " -> \($0.trimmedDescription)" } ?? ""
        var body: [String] = []
        if method.parameters.isEmpty {
            body.append("let arguments = Cordis.JSONObject()")
        } else {
            body.append("var arguments = Cordis.JSONObject()")
            for parameter in method.parameters {
                body.append(
                    "arguments[\"\(parameter.key)\"] = try Cordis.RemoteCoding.encode(\(parameter.localName))")
            }
        }
        let call = "try await endpoint.call(method: \"\(method.wireName)\", arguments: arguments)"
        if let type = method.result {
            body.append("let result = \(call)")
            body.append(
                "return try Cordis.RemoteCoding.result(\(type.metatypeBase).self, of: \"\(method.wireName)\", from: result)")
        } else {
            body.append("_ = \(call)")
        }
        let indentedBody = body.map { "        " + $0 }.joined(separator: "\n")
        return """
                \(memberAccess)func \(method.name)(\(parameters)) async throws\(result) {
            \(indentedBody)
                }
            """
    }

    /// One `case` of the dispatcher: decodes the arguments, calls the instance, encodes the result.
    private func dispatchCase(_ method: RemoteMethod) -> String {
        let arguments = method.parameters.map { parameter in
            let value = "try Cordis.RemoteCoding.argument(\(parameter.type.metatypeBase).self, "
                + "\"\(parameter.key)\", of: \"\(method.wireName)\", in: arguments)"
            return parameter.label == "_" ? value : "\(parameter.label): \(value)"
        }.joined(separator: ", ")
        let call = "try await instance.\(method.name)(\(arguments))"
        if method.result != nil {
            return "        case \"\(method.wireName)\": return try Cordis.RemoteCoding.encode(\(call))"
        }
        return """
                    case "\(method.wireName)":
                        \(call)
                        return .null
            """
    }
}
