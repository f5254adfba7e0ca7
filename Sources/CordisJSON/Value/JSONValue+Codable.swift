extension JSONValue: Codable {
    /// Decodes any JSON value; with `JSONValueDecoder` the value is taken as is, with other decoders
    /// it is rebuilt from their containers (object key order is then the decoder's `allKeys` order).
    public init(from decoder: any Decoder) throws {
        if let single = try? decoder.singleValueContainer() {
            if single.decodeNil() {
                self = .null
                return
            }
            if let flag = try? single.decode(Bool.self) {
                self = .bool(flag)
                return
            }
            if let double = try? single.decode(Double.self) {
                self = .number(double)
                return
            }
            if let text = try? single.decode(String.self) {
                self = .string(text)
                return
            }
        }
        if let keyed = try? decoder.container(keyedBy: NameKey.self) {
            var object = JSONObject()
            for key in keyed.allKeys { object[key.stringValue] = try keyed.decode(JSONValue.self, forKey: key) }
            self = .object(object)
            return
        }
        var unkeyed = try decoder.unkeyedContainer()
        var elements: [JSONValue] = []
        while !unkeyed.isAtEnd { elements.append(try unkeyed.decode(JSONValue.self)) }
        self = .array(elements)
    }

    /// Encodes the value through the encoder's containers, objects in key order.
    public func encode(to encoder: any Encoder) throws {
        switch self {
        case .null:
            var single = encoder.singleValueContainer()
            try single.encodeNil()
        case .bool(let flag):
            var single = encoder.singleValueContainer()
            try single.encode(flag)
        case .number(let number):
            // An exact integer goes as one, so any encoder writes `4`, not `4.0`.
            var single = encoder.singleValueContainer()
            if let integer = Self.safeInteger(number) { try single.encode(integer) } else { try single.encode(number) }
        case .string(let text):
            var single = encoder.singleValueContainer()
            try single.encode(text)
        case .array(let elements):
            var unkeyed = encoder.unkeyedContainer()
            for element in elements { try unkeyed.encode(element) }
        case .object(let object):
            var keyed = encoder.container(keyedBy: NameKey.self)
            for (key, value) in object { try keyed.encode(value, forKey: NameKey(key)) }
        }
    }
}
