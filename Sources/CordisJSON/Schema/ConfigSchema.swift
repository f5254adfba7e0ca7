/// The fields of a `Decodable` configuration type, found without a value by decoding it with a probe
/// that answers every request with a placeholder and records what was asked.
///
/// Nested structs, arrays (`servers[].host`), optionals and `CaseIterable` enums are followed;
/// recursive types stop at their first repetition. A type whose `init(from:)` refuses the
/// placeholders (a non-`CaseIterable` enum, a validation) ends the probe: `isComplete` is then false
/// and `fields` holds what was gathered. Probing never crashes.
public struct ConfigSchema: Sendable, Hashable {
    /// The fields in the order the type asked for them.
    public var fields: [ConfigField]
    /// The type of the whole value: `object` for a struct, or a scalar or array description.
    public var rootType: String
    /// False when the probe stopped early; `failure` then says why.
    public var isComplete: Bool
    /// Why the probe stopped early, or nil.
    public var failure: String?

    /// Creates a schema description.
    public init(fields: [ConfigField], rootType: String, isComplete: Bool, failure: String? = nil) {
        self.fields = fields
        self.rootType = rootType
        self.isComplete = isComplete
        self.failure = failure
    }

    /// Probes `type` for its fields.
    public init<T: Decodable>(of type: T.Type) {
        let state = DecodingState(mode: .probe, userInfo: [:])
        let decoder = ValueDecoder(state: state, value: nil, codingPath: [], explore: true)
        var failure: String?
        do {
            _ = try decoder.decodeValue(T.self)
        } catch {
            failure = ConfigError.Issue(decodingError: error).description
        }
        let recorder = state.recorder
        self.init(
            fields: recorder.fieldPaths.map {
                ConfigField(path: $0.path, name: $0.name, type: recorder.typeDescription(at: $0.path), isOptional: $0.optional)
            },
            rootType: recorder.rootDescription,
            isComplete: failure == nil,
            failure: failure)
    }
}
