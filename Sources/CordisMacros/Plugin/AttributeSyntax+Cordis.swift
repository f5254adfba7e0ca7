import SwiftSyntax

extension AttributeSyntax {
    /// The attribute's simple name when it is spelled `Name` or `Cordis.Name`, else nil.
    var cordisName: String? {
        if let identifier = attributeName.as(IdentifierTypeSyntax.self) {
            return identifier.name.text
        }
        if let member = attributeName.as(MemberTypeSyntax.self),
           member.baseType.as(IdentifierTypeSyntax.self)?.name.text == "Cordis" {
            return member.name.text
        }
        return nil
    }

    /// The unlabelled first argument when it is a metatype expression `Key.self`, else nil.
    var serviceKeyArgument: ExprSyntax? {
        guard case .argumentList(let arguments) = arguments,
              let first = arguments.first, first.label == nil,
              let access = first.expression.as(MemberAccessExprSyntax.self),
              access.base != nil, access.declName.baseName.tokenKind == .keyword(.self)
        else { return nil }
        return first.expression.trimmed
    }
}

extension AttributeListSyntax {
    /// The first attribute named `name` (or `Cordis.name`), looking inside `#if` clauses too.
    func first(cordis name: String) -> AttributeSyntax? {
        for element in self {
            if case .attribute(let attribute) = element, attribute.cordisName == name {
                return attribute
            }
            if case .ifConfigDecl(let ifConfig) = element {
                for clause in ifConfig.clauses {
                    if case .attributes(let nested) = clause.elements, let found = nested.first(cordis: name) {
                        return found
                    }
                }
            }
        }
        return nil
    }

    /// Whether an attribute named `name` (or `Cordis.name`) is present.
    func contains(cordis name: String) -> Bool { first(cordis: name) != nil }
}
