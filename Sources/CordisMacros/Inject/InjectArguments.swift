import SwiftSyntax

/// The arguments of one `@Inject(Key.self, optional: Bool)` attribute.
struct InjectArguments {
    /// The service key metatype expression, `Key.self`, as written.
    let key: ExprSyntax
    /// Whether the dependency is optional (`optional: true`).
    let optional: Bool

    /// Why an `@Inject` attribute's arguments could not be read.
    enum Failure: Error {
        /// The first argument is missing or is not `Key.self`; the node to point at.
        case keyExpected(Syntax)
        /// The `optional:` argument is not a Boolean literal; the node to point at.
        case optionalFlagNotLiteral(Syntax)
    }

    /// Reads the arguments of `attribute`, or says which argument is wrong.
    static func read(_ attribute: AttributeSyntax) -> Result<InjectArguments, Failure> {
        guard let key = attribute.serviceKeyArgument else {
            if case .argumentList(let arguments) = attribute.arguments, let first = arguments.first {
                return .failure(.keyExpected(Syntax(first.expression)))
            }
            return .failure(.keyExpected(Syntax(attribute)))
        }
        guard case .argumentList(let arguments) = attribute.arguments else {
            return .failure(.keyExpected(Syntax(attribute)))
        }
        var optional = false
        for argument in arguments.dropFirst() {
            guard argument.label?.text == "optional" else {
                return .failure(.keyExpected(Syntax(argument)))
            }
            guard let literal = argument.expression.as(BooleanLiteralExprSyntax.self) else {
                return .failure(.optionalFlagNotLiteral(Syntax(argument.expression)))
            }
            optional = literal.literal.tokenKind == .keyword(.true)
        }
        return .success(InjectArguments(key: key, optional: optional))
    }

    /// The `Cordis.Dependency(...)` expression text for the plugin's `injects` list.
    var dependencyExpression: String {
        optional
            ? "Cordis.Dependency(\(key.trimmedDescription), optional: true)"
            : "Cordis.Dependency(\(key.trimmedDescription))"
    }
}
