import CordisJSON

/// The key of a JSON object member whose name is only known at run time (an injected service, a
/// waiting service), and the way the control models open an object so that members they do not know
/// are ignored, as older and newer nodes may send them.
struct ObjectKey: CodingKey, Hashable {
    var stringValue: String
    var intValue: Int? { nil }

    init(_ name: String) { stringValue = name }
    init?(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { stringValue = String(intValue) }

    /// The keyed container of `decoder`'s object, after marking every member read: `JSONValueDecoder`
    /// is strict and reports a key the type never asks for, but a control model ignores such keys.
    /// A value that is not an object is reported once, by the returned container.
    static func lenientContainer<Key: CodingKey>(
        of decoder: any Decoder, keyedBy type: Key.Type
    ) throws -> KeyedDecodingContainer<Key> {
        if case .object = try decoder.singleValueContainer().decode(JSONValue.self) {
            let members = try decoder.container(keyedBy: ObjectKey.self)
            for key in members.allKeys { _ = members.contains(key) }
        }
        return try decoder.container(keyedBy: type)
    }
}
