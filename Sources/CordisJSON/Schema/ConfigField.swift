/// One field of a configuration type, as `ConfigSchema` discovered it.
public struct ConfigField: Sendable, Hashable, CustomStringConvertible {
    /// The path from the root: keys joined by dots, array elements as `[]` (`servers[].host`).
    public var path: String
    /// The key itself (the last part of the path).
    public var name: String
    /// The type: `Int`, `String`, `Bool`, `Double`, `object`, `JSON`, `[String]`, `[object]`…
    /// An enum with a `String` raw value is `String`.
    public var type: String
    /// True when the field may be absent (decoded with `decodeIfPresent`, an `Optional`).
    public var isOptional: Bool

    /// Creates a field description.
    public init(path: String, name: String, type: String, isOptional: Bool) {
        self.path = path
        self.name = name
        self.type = type
        self.isOptional = isOptional
    }

    /// `path: Type` with a `?` for optional fields (`start: Int?`).
    public var description: String { "\(path): \(type)\(isOptional ? "?" : "")" }
}
