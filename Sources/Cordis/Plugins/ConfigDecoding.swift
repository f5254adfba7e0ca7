import CordisJSON

/// Strict config decoding shared by plugins and the Loader: errors name the plugin and every path.
enum ConfigDecoding {
    static func decode<C: Decodable>(_ type: C.Type, from json: JSONValue, plugin: String) throws -> C {
        if C.self == EmptyConfig.self, json == .null || json == .object(JSONObject()) {
            if let empty = EmptyConfig() as? C { return empty }
        }
        do {
            return try JSONValueDecoder().decode(C.self, from: json)
        } catch {
            // `error` reads `invalid config:` then one `  - message (at path)` line per problem.
            throw CordisError(.invalidConfig, "plugin \"\(plugin)\": \(error)")
        }
    }
}
