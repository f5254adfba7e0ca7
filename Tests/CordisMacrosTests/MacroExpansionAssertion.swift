import CordisMacros
import SwiftDiagnostics
import SwiftParser
import SwiftSyntax
import SwiftSyntaxMacroExpansion
import SwiftSyntaxMacros
import Testing

/// A diagnostic a test expects: its message, where it points (1-based line and column in the
/// original source), and optionally its fix-it's message and the source after applying that fix-it.
struct ExpectedDiagnostic: Equatable, CustomStringConvertible {
    var message: String
    var line: Int
    var column: Int
    var fixIt: String?
    var fixedSource: String?
    /// Whether it is a warning (the build goes on) rather than an error.
    var isWarning: Bool

    init(
        _ message: String, line: Int, column: Int, fixIt: String? = nil, fixedSource: String? = nil,
        isWarning: Bool = false
    ) {
        self.message = message
        self.line = line
        self.column = column
        self.fixIt = fixIt
        self.fixedSource = fixedSource
        self.isWarning = isWarning
    }

    var description: String {
        "\(line):\(column) \(isWarning ? "warning: " : "")\(message)" + (fixIt.map { " [fix-it: \($0)]" } ?? "")
            + (fixedSource.map { "\n--- fixed ---\n\($0)" } ?? "")
    }
}

/// The result of expanding the Cordis macros in a source text.
struct MacroExpansionResult {
    var expanded: String
    var diagnostics: [ExpectedDiagnostic]
}

/// The Cordis macros as the tests spell them, with the conformance the compiler would pass to the
/// extension role (`Plugin` and `ServicePlugin`, the protocols the real declarations name).
let cordisMacroSpecs: [String: MacroSpec] = [
    "Plugin": MacroSpec(type: PluginMacro.self, conformances: ["Plugin"]),
    "Service": MacroSpec(type: ServiceMacro.self, conformances: ["ServicePlugin"]),
    "Inject": MacroSpec(type: InjectMacro.self),
    "Remote": MacroSpec(type: RemoteMacro.self),
]

/// Parses `source`, expands the Cordis macros in it and collects the diagnostics, as the compiler would.
func expandCordisMacros(in source: String, specs: [String: MacroSpec] = cordisMacroSpecs) -> MacroExpansionResult {
    let file = Parser.parse(source: source)
    let shared = BasicMacroExpansionContext(
        sourceFiles: [file: .init(moduleName: "CordisMacrosTests", fullFilePath: "test.swift")])
    let expanded = file.expand(
        macroSpecs: specs,
        contextGenerator: { node in
            BasicMacroExpansionContext(sharingWith: shared, lexicalContext: node.allMacroLexicalContexts())
        },
        indentationWidth: .spaces(4))
    // The macros see detached copies of the syntax; the context maps their positions back to the file.
    let diagnostics = shared.diagnostics.map { diagnostic in
        let location = shared.location(
            for: diagnostic.node.positionAfterSkippingLeadingTrivia, anchoredAt: diagnostic.node,
            fileName: "test.swift")
        let fixIt = diagnostic.fixIts.first
        let edits = fixIt.map { shared.sourceEdits(for: $0) }
        return ExpectedDiagnostic(
            diagnostic.message, line: location.line, column: location.column,
            fixIt: fixIt?.message.message,
            fixedSource: edits.map { applying($0, to: source) },
            isWarning: diagnostic.diagMessage.severity == .warning)
    }
    return MacroExpansionResult(expanded: expanded.description, diagnostics: diagnostics)
}

extension BasicMacroExpansionContext {
    /// The position in the original file of `position` in the detached tree that holds `node`.
    func sourcePosition(_ position: AbsolutePosition, anchoredAt node: Syntax) -> AbsolutePosition {
        AbsolutePosition(utf8Offset: location(for: position, anchoredAt: node, fileName: "test.swift").offset)
    }

    /// The fix-it's changes as edits of the original file (each change names the node it edits, whose
    /// detached tree says where it sits in the file).
    func sourceEdits(for fixIt: FixIt) -> [SourceEdit] {
        fixIt.changes.compactMap { change in
            let anchor: Syntax
            switch change {
            case .replace(let oldNode, _): anchor = oldNode
            case .replaceText(_, _, let node): anchor = node
            case .replaceLeadingTrivia(let token, _), .replaceTrailingTrivia(let token, _): anchor = Syntax(token)
            default: return nil
            }
            guard let edit = FixIt(message: fixIt.message, changes: [change]).edits.first else { return nil }
            return SourceEdit(
                range: sourcePosition(edit.range.lowerBound, anchoredAt: anchor)
                    ..< sourcePosition(edit.range.upperBound, anchoredAt: anchor),
                replacement: String(decoding: edit.replacementBytes, as: UTF8.self))
        }
    }
}

/// `source` with `edits` applied (ranges are UTF-8 offsets into the original text).
func applying(_ edits: [SourceEdit], to source: String) -> String {
    var bytes = Array(source.utf8)
    for edit in edits.sorted(by: { $0.range.lowerBound > $1.range.lowerBound }) {
        bytes.replaceSubrange(
            edit.range.lowerBound.utf8Offset..<edit.range.upperBound.utf8Offset, with: edit.replacementBytes)
    }
    return String(decoding: bytes, as: UTF8.self)
}

/// Expects `source` to expand to `expected` (compared without leading and trailing white space) and to
/// produce exactly `diagnostics`, in order.
func assertMacroExpansion(
    _ source: String, expandsTo expected: String, diagnostics: [ExpectedDiagnostic] = [],
    sourceLocation: Testing.SourceLocation = #_sourceLocation
) {
    let result = expandCordisMacros(in: source)
    let actual = result.expanded.trimmingWhitespace
    #expect(actual == expected.trimmingWhitespace, "expansion:\n\(actual)", sourceLocation: sourceLocation)
    #expect(result.diagnostics == diagnostics, sourceLocation: sourceLocation)
}

extension String {
    /// The text without leading and trailing spaces and newlines.
    var trimmingWhitespace: String {
        let characters = Substring(self)
        let start = characters.firstIndex(where: { !$0.isWhitespace }) ?? characters.endIndex
        let end = characters.lastIndex(where: { !$0.isWhitespace }).map { characters.index(after: $0) } ?? start
        return String(characters[start..<max(start, end)])
    }
}
