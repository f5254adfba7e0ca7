extension JSONValue {
    /// The string, or nil when the value is not a string.
    public var stringValue: String? {
        if case .string(let value) = self { return value }
        return nil
    }

    /// The boolean, or nil when the value is not a boolean.
    public var boolValue: Bool? {
        if case .bool(let value) = self { return value }
        return nil
    }

    /// The number as an `Int`, when it is integral and exact (within ±`maxSafeInteger`): `3` and `3.0`
    /// give 3; `3.5` and `1e300` give nil.
    public var intValue: Int? {
        guard case .number(let number) = self, let exact = Self.safeInteger(number) else { return nil }
        return Int(exactly: exact)
    }

    /// The number as an `Int64`, when it is integral and exact (within ±`maxSafeInteger`).
    public var int64Value: Int64? {
        guard case .number(let number) = self else { return nil }
        return Self.safeInteger(number)
    }

    /// The number, or nil when the value is not a number.
    public var doubleValue: Double? {
        guard case .number(let number) = self else { return nil }
        return number
    }

    /// The elements, or nil when the value is not an array.
    public var arrayValue: [JSONValue]? {
        if case .array(let value) = self { return value }
        return nil
    }

    /// The object, or nil when the value is not an object.
    public var objectValue: JSONObject? {
        if case .object(let value) = self { return value }
        return nil
    }

    /// True for `null`.
    public var isNull: Bool {
        if case .null = self { return true }
        return false
    }

    /// The kind of the value in words, as error messages name it (`"string"`, `"integer"`, `"object"`…).
    public var kindName: String {
        switch self {
        case .null: return "null"
        case .bool: return "boolean"
        case .number(let number): return Self.safeInteger(number) != nil ? "integer" : "number"
        case .string: return "string"
        case .array: return "array"
        case .object: return "object"
        }
    }

    /// The member `key` of an object; nil when absent or when the value is not an object.
    /// Setting on a non-object value turns it into an object with that one member.
    public subscript(key: String) -> JSONValue? {
        get {
            guard case .object(let object) = self else { return nil }
            return object[key]
        }
        set {
            var object = objectValue ?? JSONObject()
            object[key] = newValue
            self = .object(object)
        }
    }

    /// The element at `index` of an array; nil when out of range or when the value is not an array.
    public subscript(index: Int) -> JSONValue? {
        guard case .array(let array) = self, array.indices.contains(index) else { return nil }
        return array[index]
    }
}

extension JSONValue: CustomStringConvertible {
    /// The value as compact JSON text.
    public var description: String {
        var bytes: [UInt8] = []
        JSONSerializer.append(self, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }
}
