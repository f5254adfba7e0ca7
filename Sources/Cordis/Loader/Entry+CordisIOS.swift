import CordisJSON

extension Entry {
    /// Creates an entry with cordis-ios's arguments, in its order (`config` before `disabled`); the same
    /// entry as `init(id:plugin:disabled:isolate:config:children:…)` makes.
    public init(
        id: String, plugin: String, config: JSONValue? = nil, disabled: Bool = false,
        isolate: [String: IsolateSpec]? = nil, children: [Entry]? = nil
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
