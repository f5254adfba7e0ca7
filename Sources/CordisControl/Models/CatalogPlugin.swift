import CordisJSON

/// One plugin in a `catalog` result: what a node can run, with its config fields. The JSON members,
/// in order: `name`, `injects`, `provides`, `config` (`[{"path", "type", "optional"}]`).
///
/// Decoding needs `name` (and `path` for a field); other missing members read as empty, `?` for a
/// field's type, `false` for `optional`.
public struct CatalogPlugin: Sendable, Hashable, Codable {
    /// One config field of the plugin's schema.
    public struct Field: Sendable, Hashable, Codable {
        /// The field's path in the config.
        public var path: String
        /// Its type name.
        public var type: String
        /// Whether it may be left out.
        public var optional: Bool

        /// The JSON members, in the order they are written.
        enum CodingKeys: String, CodingKey {
            case path, type, optional
        }

        /// Creates a field.
        public init(path: String, type: String, optional: Bool) {
            self.path = path
            self.type = type
            self.optional = optional
        }

        /// Decodes a field. Throws `DecodingError`.
        public init(from decoder: any Decoder) throws {
            let container = try ObjectKey.lenientContainer(of: decoder, keyedBy: CodingKeys.self)
            path = try container.decode(String.self, forKey: .path)
            type = try container.decodeIfPresent(String.self, forKey: .type) ?? "?"
            optional = try container.decodeIfPresent(Bool.self, forKey: .optional) ?? false
        }

        /// Encodes the field.
        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(path, forKey: .path)
            try container.encode(type, forKey: .type)
            try container.encode(optional, forKey: .optional)
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

    /// The JSON members, in the order they are written.
    enum CodingKeys: String, CodingKey {
        case name, injects, provides, config
    }

    /// Creates a plugin.
    public init(name: String, injects: [String], provides: [String], config: [Field]) {
        self.name = name
        self.injects = injects
        self.provides = provides
        self.config = config
    }

    /// Decodes a plugin. Throws `DecodingError` (with `JSONValueDecoder`, `ConfigError`).
    public init(from decoder: any Decoder) throws {
        let container = try ObjectKey.lenientContainer(of: decoder, keyedBy: CodingKeys.self)
        name = try container.decode(String.self, forKey: .name)
        injects = try container.decodeIfPresent([String].self, forKey: .injects) ?? []
        provides = try container.decodeIfPresent([String].self, forKey: .provides) ?? []
        config = try container.decodeIfPresent([Field].self, forKey: .config) ?? []
    }

    /// Encodes the plugin.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(name, forKey: .name)
        try container.encode(injects, forKey: .injects)
        try container.encode(provides, forKey: .provides)
        try container.encode(config, forKey: .config)
    }
}
