extension JSONValue {
    /// How many arrays and objects are nested at the deepest point: 0 for a scalar, 1 for `[]` or
    /// `{"a": 1}`, 2 for `[[]]`. A parser with `maxDepth` reads back any value whose nesting is at most
    /// that. Computed without recursion, so any value can be measured.
    public var nestingDepth: Int {
        var deepest = 0
        var pending: [(value: JSONValue, depth: Int)] = [(self, 0)]
        while let (value, depth) = pending.popLast() {
            switch value {
            case .array(let elements):
                deepest = max(deepest, depth + 1)
                for element in elements { pending.append((element, depth + 1)) }
            case .object(let object):
                deepest = max(deepest, depth + 1)
                for (_, member) in object { pending.append((member, depth + 1)) }
            case .null, .bool, .number, .string:
                continue
            }
        }
        return deepest
    }
}
