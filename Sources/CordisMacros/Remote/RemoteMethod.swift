import SwiftSyntax

/// One method requirement of a `@Remote` protocol, read into what the proxy, the dispatcher and the
/// version need.
struct RemoteMethod {
    /// One parameter of the method.
    struct Parameter {
        /// The argument label as written (`_` for none).
        let label: String
        /// The name the proxy's body uses for the value.
        let localName: String
        /// The parameter's type, without trivia.
        let type: TypeSyntax
        /// The key in the call's argument object: the label, or `_<position>` for an unlabelled one.
        let key: String
    }

    /// The method's name as written (backticks kept).
    let name: String
    /// The name as it travels (backticks removed).
    let wireName: String
    /// The parameters, in order.
    let parameters: [Parameter]
    /// The result type, nil for a method without a result (`Void` or `()` included).
    let result: TypeSyntax?

    /// Names the proxy body declares itself, which a parameter must not shadow.
    private static let reservedLocals: Set<String> = ["arguments", "result", "endpoint", "self"]

    /// Reads a requirement that passed the checks.
    init(_ function: FunctionDeclSyntax) {
        name = function.name.text
        wireName = function.name.text.withoutBackticks
        var parameters: [Parameter] = []
        for (position, parameter) in function.signature.parameterClause.parameters.enumerated() {
            let label = parameter.firstName.text
            let inner = (parameter.secondName ?? parameter.firstName).text
            let usable = inner != "_" && !Self.reservedLocals.contains(inner.withoutBackticks)
            parameters.append(Parameter(
                label: label,
                localName: usable ? inner : "argument\(position)",
                type: parameter.type.trimmed,
                key: label == "_" ? "_\(position)" : label.withoutBackticks))
        }
        self.parameters = parameters
        if let returnType = function.signature.returnClause?.type, !returnType.isVoid {
            result = returnType.trimmed
        } else {
            result = nil
        }
    }

    /// `name(label:Type,label:Type)->Result` with all trivia removed, for the version.
    var normalisedSignature: String {
        let parameterList = parameters.map { "\($0.label.withoutBackticks):\($0.type.compactText)" }
            .joined(separator: ",")
        return "\(wireName)(\(parameterList))->\(result?.compactText ?? "Void")"
    }
}

extension TypeSyntax {
    /// The type's tokens joined without any trivia (no white space, no comments).
    var compactText: String {
        tokens(viewMode: .sourceAccurate).map(\.text).joined()
    }

    /// Whether the type is `Void`, `Swift.Void` or `()`.
    var isVoid: Bool {
        let text = compactText
        return text == "Void" || text == "Swift.Void" || text == "()"
    }

    /// The type as the base of a `.self` expression: parenthesised unless it is a plain name, a member
    /// name, an array, a dictionary or an optional.
    var metatypeBase: String {
        if self.is(IdentifierTypeSyntax.self) || self.is(MemberTypeSyntax.self) || self.is(ArrayTypeSyntax.self)
            || self.is(DictionaryTypeSyntax.self) || self.is(OptionalTypeSyntax.self) {
            return trimmedDescription
        }
        return "(\(trimmedDescription))"
    }
}

extension String {
    /// The identifier without the backticks of a raw identifier (`` `default` `` becomes `default`).
    var withoutBackticks: String {
        hasPrefix("`") && hasSuffix("`") && count >= 2 ? String(dropFirst().dropLast()) : self
    }
}
