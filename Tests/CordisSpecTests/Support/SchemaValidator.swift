import CordisJSON
import Foundation

/// The subset of JSON Schema (2020-12) the files in `docs/schemas/` use, checked over `JSONValue`:
/// `type` (one or a list; `integer` is a JSON integer), `const`, `enum`, `properties`, `required`,
/// `additionalProperties` (a boolean or a schema), `items`, `minItems`, `maxItems`, `minLength`,
/// `maxLength` (in characters), `pattern`, `minimum`, `maximum`, `oneOf`, `anyOf`, `allOf`, `not`,
/// and `$ref` to `#/$defs/NAME` or to `FILE#/$defs/NAME` beside the schema. A keyword the validator
/// does not know makes the check fail, so a schema cannot silently say more than is checked.
struct SchemaValidator {
    /// One problem: where in the instance, and what.
    struct Problem: CustomStringConvertible {
        let path: String
        let message: String
        var description: String { "\(path.isEmpty ? "(root)" : path): \(message)" }
    }

    static let known: Set<String> = [
        "$schema", "$id", "$defs", "$comment", "title", "description", "examples", "type", "const", "enum",
        "properties", "required", "additionalProperties", "items", "minItems", "maxItems", "minLength", "maxLength",
        "pattern", "minimum", "maximum", "oneOf", "anyOf", "allOf", "not", "$ref", "default",
    ]

    /// The folder holding the schema files, for references between them.
    let folder: URL
    private var files: [String: JSONValue] = [:]

    init(folder: URL) throws {
        self.folder = folder
        for name in try FileManager.default.contentsOfDirectory(atPath: folder.path) where name.hasSuffix(".json") {
            let data = try Data(contentsOf: folder.appendingPathComponent(name))
            files[name] = try JSONParser().parse(Array(data))
        }
    }

    /// The problems of `instance` against definition `definition` of schema file `file` (the whole file
    /// when `definition` is nil).
    func problems(of instance: JSONValue, file: String, definition: String? = nil) -> [Problem] {
        guard let root = files[file] else { return [Problem(path: "", message: "no schema file \(file)")] }
        let schema = definition.map { root["$defs"]?[$0] ?? .null } ?? root
        guard schema != .null else { return [Problem(path: "", message: "\(file) has no definition \(definition ?? "")")] }
        var found: [Problem] = []
        check(instance, against: schema, file: file, path: "", into: &found)
        return found
    }

    private func resolve(_ reference: String, from file: String) -> (schema: JSONValue, file: String)? {
        let parts = reference.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false)
        let target = parts[0].isEmpty ? file : String(parts[0])
        guard let root = files[target] else { return nil }
        guard parts.count == 2, !parts[1].isEmpty else { return (root, target) }
        var node: JSONValue? = root
        for step in parts[1].split(separator: "/") { node = node?[String(step)] }
        return node.map { ($0, target) }
    }

    private func typeName(_ value: JSONValue) -> String {
        switch value {
        case .null: return "null"
        case .bool: return "boolean"
        case .number(let number): return number.rounded() == number ? "integer" : "number"
        case .string: return "string"
        case .array: return "array"
        case .object: return "object"
        }
    }

    private func matches(_ value: JSONValue, type: String) -> Bool {
        let actual = typeName(value)
        return actual == type || (type == "number" && actual == "integer")
    }

    private func check(
        _ value: JSONValue, against schema: JSONValue, file: String, path: String, into found: inout [Problem]
    ) {
        if case .bool(let allowed) = schema {
            if !allowed { found.append(Problem(path: path, message: "no value is allowed here")) }
            return
        }
        guard case .object(let keywords) = schema else {
            found.append(Problem(path: path, message: "the schema is not an object"))
            return
        }
        for key in keywords.keys where !Self.known.contains(key) {
            found.append(Problem(path: path, message: "the schema uses \(key), which this check does not support"))
        }
        if let reference = keywords["$ref"]?.stringValue {
            guard let (target, targetFile) = resolve(reference, from: file) else {
                found.append(Problem(path: path, message: "unresolved $ref \(reference)"))
                return
            }
            check(value, against: target, file: targetFile, path: path, into: &found)
        }
        if let type = keywords["type"] {
            let types = type.arrayValue?.compactMap(\.stringValue) ?? [type.stringValue ?? ""]
            guard types.contains(where: { matches(value, type: $0) }) else {
                found.append(Problem(path: path, message: "expected \(types.joined(separator: " or ")), got \(typeName(value))"))
                return
            }
        }
        if let constant = keywords["const"], constant != value {
            found.append(Problem(path: path, message: "expected the constant \(constant)"))
        }
        if let choices = keywords["enum"]?.arrayValue, !choices.contains(value) {
            found.append(Problem(path: path, message: "not one of \(choices.compactMap(\.stringValue))"))
        }
        if case .string(let text) = value {
            if let least = keywords["minLength"]?.intValue, text.count < least {
                found.append(Problem(path: path, message: "shorter than \(least) characters"))
            }
            if let most = keywords["maxLength"]?.intValue, text.count > most {
                found.append(Problem(path: path, message: "longer than \(most) characters"))
            }
            if let pattern = keywords["pattern"]?.stringValue {
                if let regex = try? Regex(pattern) {
                    if (try? regex.firstMatch(in: text)) == nil {
                        found.append(Problem(path: path, message: "does not match \(pattern)"))
                    }
                } else {
                    found.append(Problem(path: path, message: "the pattern \(pattern) does not compile"))
                }
            }
        }
        if case .number(let number) = value {
            if let least = keywords["minimum"]?.doubleValue, number < least {
                found.append(Problem(path: path, message: "below the minimum \(least)"))
            }
            if let most = keywords["maximum"]?.doubleValue, number > most {
                found.append(Problem(path: path, message: "above the maximum \(most)"))
            }
        }
        if case .array(let items) = value {
            if let least = keywords["minItems"]?.intValue, items.count < least {
                found.append(Problem(path: path, message: "fewer than \(least) items"))
            }
            if let most = keywords["maxItems"]?.intValue, items.count > most {
                found.append(Problem(path: path, message: "more than \(most) items"))
            }
            if let itemSchema = keywords["items"] {
                for (index, item) in items.enumerated() {
                    check(item, against: itemSchema, file: file, path: "\(path)[\(index)]", into: &found)
                }
            }
        }
        if case .object(let members) = value {
            let properties = keywords["properties"]?.objectValue ?? JSONObject()
            for required in keywords["required"]?.arrayValue?.compactMap(\.stringValue) ?? [] where members[required] == nil {
                found.append(Problem(path: path, message: "the required member \(required) is missing"))
            }
            for (key, member) in members {
                if let memberSchema = properties[key] {
                    check(member, against: memberSchema, file: file, path: "\(path).\(key)", into: &found)
                } else if let extra = keywords["additionalProperties"] {
                    check(member, against: extra, file: file, path: "\(path).\(key)", into: &found)
                }
            }
        }
        if let all = keywords["allOf"]?.arrayValue {
            for part in all { check(value, against: part, file: file, path: path, into: &found) }
        }
        if let any = keywords["anyOf"]?.arrayValue {
            let passing = any.filter { part in
                var scratch: [Problem] = []
                check(value, against: part, file: file, path: path, into: &scratch)
                return scratch.isEmpty
            }
            if passing.isEmpty { found.append(Problem(path: path, message: "matches none of anyOf")) }
        }
        if let one = keywords["oneOf"]?.arrayValue {
            var failures: [[Problem]] = []
            for part in one {
                var scratch: [Problem] = []
                check(value, against: part, file: file, path: path, into: &scratch)
                failures.append(scratch)
            }
            let passing = failures.filter(\.isEmpty).count
            if passing != 1 {
                let closest = failures.filter { !$0.isEmpty }.min { $0.count < $1.count } ?? []
                found.append(Problem(
                    path: path,
                    message: "matches \(passing) of oneOf, not exactly one"
                        + (closest.isEmpty ? "" : " (closest: \(closest.map(\.description).joined(separator: "; ")))")))
            }
        }
        if let negated = keywords["not"] {
            var scratch: [Problem] = []
            check(value, against: negated, file: file, path: path, into: &scratch)
            if scratch.isEmpty { found.append(Problem(path: path, message: "matches a schema it must not")) }
        }
    }
}
