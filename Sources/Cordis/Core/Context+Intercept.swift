import CordisJSON

/// A typed name for an intercept (cordis's `ctx.intercept`): per-subtree configuration that a service
/// reads for the plugins that call it, e.g. the name a logger gives their records.
///
/// ```swift
/// enum NamerIntercept: InterceptKey {
///   struct Config: Codable, Sendable { var prefix: String }
///   static let name = "namer"
/// }
/// ```
public protocol InterceptKey {
    /// What the intercept carries.
    associatedtype Config
    /// The intercept's name (usually the name of the service that reads it).
    static var name: String { get }
}

extension Context {
    /// A context that carries `config` for the intercept `key`: plugins started from it (and their own
    /// children) see it through `interceptConfig(_:)`, until a nearer `intercept` replaces it.
    public func intercept<K: InterceptKey>(_ key: K.Type, _ config: K.Config) -> Context {
        intercept(name: K.name, stored: config)
    }

    /// A context that carries the JSON `config` for the intercept named `name` (what the Loader's
    /// `intercept` field gives); `interceptConfig(_:)` decodes it strictly as the key's `Config`.
    public func intercept(name: String, _ config: JSONValue) -> Context {
        intercept(name: name, stored: config)
    }

    /// A context that carries `config` as it is for the intercept named `name`.
    func intercept(name: String, stored config: Any) -> Context {
        var intercepts = self.intercepts
        intercepts[name] = config
        return Context(fiber: fiber, realms: realms, intercepts: intercepts, parent: self)
    }

    /// The nearest config of the intercept `key` for this context (cordis-ios's spelling), or nil when
    /// none applies. A JSON config (from the Loader) is decoded as `K.Config`; one that does not decode
    /// is logged as an error naming the plugin and the path, and nil is returned (use `intercepted(_:)`
    /// to get the error instead).
    public func interceptConfig<K: InterceptKey>(_ key: K.Type) -> K.Config? {
        do {
            return try intercepted(key)
        } catch {
            logger.error("\(error)")
            return nil
        }
    }

    /// The nearest config of the intercept `key` for this context, or nil when none applies; a JSON config
    /// is decoded strictly as `K.Config`.
    ///
    /// - Throws: `CordisError` `.invalidConfig` naming the intercept, the plugin and each path, when the
    ///   config does not decode; `.typeMismatch` when it holds another type.
    public func intercepted<K: InterceptKey>(_ key: K.Type) throws -> K.Config? {
        guard let stored = intercepts[K.name] else { return nil }
        if let typed = stored as? K.Config { return typed }
        if let json = stored as? JSONValue, let decodable = K.Config.self as? any Decodable.Type {
            let plugin = "\(fiber.name) (intercept \"\(K.name)\")"
            let decoded = try Self.decode(decodable, from: json, plugin: plugin)
            if let typed = decoded as? K.Config { return typed }
        }
        throw CordisError(
            .typeMismatch, "intercept \"\(K.name)\" of \(fiber.name) holds a \(type(of: stored)), not a \(K.Config.self)")
    }

    private static func decode<T: Decodable>(_ type: T.Type, from json: JSONValue, plugin: String) throws -> T {
        try ConfigDecoding.decode(T.self, from: json, plugin: plugin)
    }
}
