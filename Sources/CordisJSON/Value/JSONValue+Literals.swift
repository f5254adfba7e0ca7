extension JSONValue: ExpressibleByNilLiteral, ExpressibleByBooleanLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByFloatLiteral, ExpressibleByStringLiteral, ExpressibleByArrayLiteral,
    ExpressibleByDictionaryLiteral
{
    public init(nilLiteral: ()) { self = .null }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(integerLiteral value: Int64) { self = .number(Double(value)) }
    public init(floatLiteral value: Double) { self = .number(value) }
    public init(stringLiteral value: String) { self = .string(value) }
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        var object = JSONObject()
        for (key, value) in elements { object[key] = value }
        self = .object(object)
    }

    /// An integer number: exact within ±`maxSafeInteger`, the nearest `Double` beyond.
    public static func integer(_ value: some BinaryInteger) -> JSONValue { .number(Double(value)) }

    /// An object from a dictionary, as cordis-ios builds one (`.object(dictionary)`): its members in key
    /// order, so the value is written the same way every time. A literal (`.object(["b": 1, "a": 2])`)
    /// makes a `JSONObject` instead, in the order written.
    @_disfavoredOverload
    public static func object(_ dictionary: [String: JSONValue]) -> JSONValue {
        .object(JSONObject(dictionary.sorted { $0.key < $1.key }))
    }

    /// A floating-point number: the same as `.number(value)`.
    public static func double(_ value: Double) -> JSONValue { .number(value) }
}
