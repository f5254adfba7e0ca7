import Foundation

/// Files of the repository the tests check the implementation against: the docs, the schemas beside
/// them, and the conformance client.
enum Repository {
    /// The repository's root folder (found from this source file's path).
    static let root = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static func url(_ path: String) -> URL { root.appendingPathComponent(path) }

    /// A file of the repository as text.
    static func text(_ path: String) throws -> String {
        try String(contentsOf: url(path), encoding: .utf8)
    }

    /// The schema files of `docs/schemas`.
    static func schemas() throws -> SchemaValidator {
        try SchemaValidator(folder: url("docs/schemas"))
    }

    /// Every example frame of `docs/wire-protocol.md`: lines of 8 hex digits (the length prefix), a space
    /// and the JSON payload, as `(length, json)`.
    static func protocolExamples() throws -> [(length: Int, json: String)] {
        try text("docs/wire-protocol.md").split(separator: "\n").compactMap { line in
            let text = String(line)
            let prefix = text.prefix(9)
            guard prefix.count == 9, prefix.last == " ", let length = Int(prefix.dropLast(), radix: 16),
                  prefix.dropLast().allSatisfy(\.isHexDigit), text.dropFirst(9).first == "{"
            else { return nil }
            return (length, String(text.dropFirst(9)))
        }
    }
}
