/// A JSON document: null, a boolean, a number, a string, an array or an object.
///
/// A number is a `Double`, as in cordis-ios and JavaScript: integers are exact up to ±(2^53 − 1)
/// (`JSONValue.maxSafeInteger`) and an integral number is written without a fraction (`4`, not
/// `4.0`). Objects keep their key order (see `JSONObject`), so a value parsed and written back keeps
/// its members where they were. Build values with literals:
/// `let v: JSONValue = ["type": "call", "id": 42, "args": [:]]`.
public enum JSONValue: Sendable, Hashable {
    /// `null`.
    case null
    /// `true` or `false`.
    case bool(Bool)
    /// A number, integer or floating point.
    case number(Double)
    /// A string.
    case string(String)
    /// An array.
    case array([JSONValue])
    /// An object with ordered keys.
    case object(JSONObject)
}

extension JSONValue {
    /// The largest integer a JSON number carries exactly, 2^53 − 1 (JavaScript's
    /// `Number.MAX_SAFE_INTEGER`): from 2^53 on, neighbouring doubles are more than 1 apart.
    public static let maxSafeInteger: Int64 = (1 << 53) - 1

    /// `value` as an integer when it is integral and within ±`maxSafeInteger`, else nil.
    static func safeInteger(_ value: Double) -> Int64? {
        guard value.magnitude <= Double(maxSafeInteger) else { return nil }
        return Int64(exactly: value)
    }
}
