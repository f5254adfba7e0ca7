import CordisJSON

/// One plugin in a `catalog` result: what a node can run, with its config fields.
public struct CatalogPlugin: Sendable, Hashable {
    /// One config field of the plugin's schema.
    public struct Field: Sendable, Hashable {
        /// The field's path in the config.
        public var path: String
        /// Its type name.
        public var type: String
        /// Whether it may be left out.
        public var optional: Bool

        /// Creates a field.
        public init(path: String, type: String, optional: Bool) {
            self.path = path
            self.type = type
            self.optional = optional
        }
    }

    /// The plugin's name.
    public var name: String
    /// The services it injects.
    public var injects: [String]
    /// The services it provides.
    public var provides: [String]
    /// Its config fields.
    public var config: [Field]

    /// Creates a plugin.
    public init(name: String, injects: [String], provides: [String], config: [Field]) {
        self.name = name
        self.injects = injects
        self.provides = provides
        self.config = config
    }

    /// The JSON object.
    public var json: JSONValue {
        .object([
            "name": .string(name), "injects": .array(injects.map { .string($0) }),
            "provides": .array(provides.map { .string($0) }),
            "config": .array(config.map { field in
                .object(["path": .string(field.path), "type": .string(field.type), "optional": .bool(field.optional)])
            }),
        ])
    }

    /// Reads a plugin; nil without a name.
    public init?(json: JSONValue) {
        guard let name = json["name"]?.stringValue else { return nil }
        self.name = name
        injects = (json["injects"]?.arrayValue ?? []).compactMap(\.stringValue)
        provides = (json["provides"]?.arrayValue ?? []).compactMap(\.stringValue)
        config = (json["config"]?.arrayValue ?? []).compactMap { field in
            field["path"]?.stringValue.map {
                Field(path: $0, type: field["type"]?.stringValue ?? "?", optional: field["optional"]?.boolValue ?? false)
            }
        }
    }
}
