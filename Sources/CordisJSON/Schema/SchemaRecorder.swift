/// Gathers, during a probe, the fields a type asks for and the shape of the value at each path.
struct SchemaRecorder {
    private(set) var fieldPaths: [(path: String, name: String, optional: Bool)] = []
    private var fieldIndex: [String: Int] = [:]
    private var shapes: [String: String] = [:]

    /// The probe's path text: keys joined by dots, array elements as `[]` (`servers[].host`).
    static func pathText(_ codingPath: [any CodingKey]) -> String {
        var text = ""
        for key in codingPath {
            if key is IndexKey {
                text += "[]"
            } else {
                if !text.isEmpty { text += "." }
                text += key.stringValue
            }
        }
        return text
    }

    mutating func addField(at codingPath: [any CodingKey], optional: Bool) {
        let path = Self.pathText(codingPath)
        if let existing = fieldIndex[path] {
            fieldPaths[existing].optional = fieldPaths[existing].optional && optional
            return
        }
        fieldIndex[path] = fieldPaths.count
        fieldPaths.append((path, codingPath.last?.stringValue ?? "", optional))
    }

    mutating func setShape(_ shape: String, at codingPath: [any CodingKey]) {
        let path = Self.pathText(codingPath)
        if shapes[path] == nil { shapes[path] = shape }
    }

    /// The type description at `path`: a scalar's name, `object`, `JSON`, or `[element]` for arrays.
    func typeDescription(at path: String) -> String {
        var suffix = ""
        var path = path
        var prefix = ""
        // Arrays of arrays nest, bounded by the path's own length.
        for _ in 0...64 {
            guard shapes[path] == "array" else { break }
            prefix += "["
            suffix += "]"
            path += "[]"
        }
        return prefix + (shapes[path] ?? (prefix.isEmpty ? "unknown" : "Any")) + suffix
    }

    /// The root's type description.
    var rootDescription: String { typeDescription(at: "") }
}
