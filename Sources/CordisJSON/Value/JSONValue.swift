/// A JSON document: null, a boolean, a number, a string, an array or an object.
///
/// Numbers stay exact (see `JSONNumber`) and objects keep their key order (see `JSONObject`), so a
/// value parsed and written back is unchanged. Build values with literals:
/// `let v: JSONValue = ["type": "call", "id": 42, "args": [:]]`.
public enum JSONValue: Sendable, Hashable {
    /// `null`.
    case null
    /// `true` or `false`.
    case bool(Bool)
    /// A number, integer or floating point.
    case number(JSONNumber)
    /// A string.
    case string(String)
    /// An array.
    case array([JSONValue])
    /// An object with ordered keys.
    case object(JSONObject)
}
