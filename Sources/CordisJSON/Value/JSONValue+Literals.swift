extension JSONValue: ExpressibleByNilLiteral, ExpressibleByBooleanLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByFloatLiteral, ExpressibleByStringLiteral, ExpressibleByArrayLiteral,
    ExpressibleByDictionaryLiteral
{
    public init(nilLiteral: ()) { self = .null }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(integerLiteral value: Int64) { self = .number(.integer(value)) }
    public init(floatLiteral value: Double) { self = .number(.double(value)) }
    public init(stringLiteral value: String) { self = .string(value) }
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        var object = JSONObject()
        for (key, value) in elements { object[key] = value }
        self = .object(object)
    }

    /// An integer number.
    public static func integer(_ value: some BinaryInteger) -> JSONValue {
        if let exact = Int64(exactly: value) { return .number(.integer(exact)) }
        return .number(.double(Double(value)))
    }

    /// A floating-point number (written with a fraction or exponent, `1.0`, even when integral).
    public static func double(_ value: Double) -> JSONValue { .number(.double(value)) }
}

extension JSONValue {
    /// A number from a `Double`, as cordis-ios writes it (`.number(someDouble)`, whose `JSONValue` holds a
    /// `Double`): the same as `double(_:)`. A literal (`.number(4)`) makes a `JSONNumber` instead, so an
    /// integer stays one.
    @_disfavoredOverload
    public static func number(_ value: Double) -> JSONValue { .number(.double(value)) }
}

extension JSONNumber: ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral {
    /// An integer literal: `.integer`.
    public init(integerLiteral value: Int64) { self = .integer(value) }
    /// A literal with a fraction or exponent: `.double`.
    public init(floatLiteral value: Double) { self = .double(value) }
}
