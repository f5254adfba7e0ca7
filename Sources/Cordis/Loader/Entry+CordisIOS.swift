import CordisJSON

/// cordis-ios's name for how an entry isolates a service.
public typealias IsolateSpec = IsolateValue

extension IsolateValue {
    /// A realm private to the entry (cordis-ios's `IsolateSpec.local`; `true` in the file).
    public static var local: IsolateValue { .private }

    /// The shared realm with this label (cordis-ios's `IsolateSpec.shared(_:)`).
    public static func shared(_ label: String) -> IsolateValue { .label(label) }
}

extension Entry {
    /// Creates an entry with cordis-ios's arguments, in its order (`config` before `disabled`); the same
    /// entry as `init(id:plugin:disabled:isolate:config:children:…)` makes.
    public init(
        id: String, plugin: String, config: JSONValue? = nil, disabled: Bool = false,
        isolate: [String: IsolateSpec] = [:], children: [Entry]? = nil
    ) {
        self.init(id: id, plugin: plugin as String?, disabled: disabled, isolate: isolate, config: config, children: children)
    }
}

extension Entry: Identifiable {}

extension Entry: Codable {
    /// Decodes an entry from any decoder (cordis-ios's `Entry` is `Codable`) through its JSON form, with
    /// the same checks and errors as the entries file (`init(json:location:)`): a bare cordis-ios array
    /// of entries decodes with `JSONDecoder` as it does there.
    ///
    /// - Throws: `EntryError` naming the entry and the field, or the decoder's own error.
    public init(from decoder: any Decoder) throws {
        try self.init(json: JSONValue(from: decoder))
    }

    /// Encodes the entry as the entries file writes it (`json()`): `disabled` only when true, unknown
    /// fields kept.
    public func encode(to encoder: any Encoder) throws {
        try json().encode(to: encoder)
    }
}

extension IsolateValue: Codable {
    /// Decodes `true` (a private realm) or a label string, as the entries file writes them.
    ///
    /// - Throws: `DecodingError.dataCorrupted` for anything else (`false`, a number, an empty label).
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        guard let value = IsolateValue(json: try container.decode(JSONValue.self)) else {
            throw DecodingError.dataCorruptedError(
                in: container, debugDescription: "an isolate value is true or a non-empty realm label")
        }
        self = value
    }

    /// Encodes `true` for a private realm, the label for a shared one.
    public func encode(to encoder: any Encoder) throws {
        try json.encode(to: encoder)
    }
}
