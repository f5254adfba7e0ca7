import CordisJSON

/// The plugins a `Loader` can start, by name: plugin types and function plugins, each with its config
/// fields and the services it injects and provides.
///
/// Registering a name twice replaces the first registration. `group` is reserved for groups.
public struct PluginCatalog: Sendable {
    /// One plugin the catalog knows: its name, config fields, services, and how to start it.
    public struct Item: Sendable {
        /// The name entries use in their `plugin` field.
        public let name: String
        /// The fields of its config, found by probing the config type.
        public let schema: ConfigSchema
        /// The services it injects.
        public let injects: [Dependency]
        /// The services it declares it provides (a function plugin may provide more while it runs).
        public let provides: [String]
        let prepare: @Sendable @CordisActor (JSONValue) throws -> PreparedPlugin
        let encode: @Sendable @CordisActor (Any) -> JSONValue?
        /// The plugin value it was registered from (a `PluginType` for a plugin type), if any.
        var plugin: (any AnyPlugin)? = nil
        /// For a closure registered by name, what the identity its fibers share is.
        var anchor = PluginAnchor()

        /// Which plugin its fibers are fibers of: the registered value's, or the registration's own.
        var identity: PluginIdentity { plugin?.identity ?? .function(ObjectIdentifier(anchor)) }
    }

    var items: [String: Item] = [:]

    /// An empty catalog.
    public init() {}

    /// Registers a plugin type under `name` (its `P.name` by default); its config is decoded strictly
    /// from the entry's `config`.
    @CordisActor
    public mutating func register<P: Plugin>(_ type: P.Type, as name: String? = nil) {
        let name = name ?? P.name
        items[name] = Item(
            name: name, schema: ConfigSchema(of: P.Config.self), injects: P.allDependencies, provides: P.provides,
            prepare: { json in
                let decoded = try JSONValueDecoder().decode(P.Config.self, from: Self.normalized(json))
                let config = try P.validated(decoded)
                return PreparedPlugin(config: config) { ctx, config, extra in
                    try ctx.spawn(
                        PluginRunner.forType(P.self, config: Self.cast(config, to: P.Config.self, plugin: name)),
                        injecting: extra)
                }
            },
            encode: { config in Self.encode(config, as: P.Config.self) }, plugin: PluginType(P.self))
    }

    /// Registers a function plugin that takes no config (its entry's `config` must be absent or `{}`).
    ///
    /// - Parameter provides: the services `apply` provides, so realm changes know to rebuild it.
    @available(
        *, deprecated,
        message: "register a FunctionPlugin, as in cordis-ios: catalog.register(FunctionPlugin<NoConfig>(name:inject:provides:) { ctx, _, scope in … }, as: name)"
    )
    @CordisActor
    public mutating func register(
        name: String, inject: [Dependency] = [], provides: [String] = [],
        _ apply: @escaping @CordisActor (EffectScope) async throws -> Void
    ) {
        register(name: name, config: EmptyConfig.self, inject: inject, provides: provides) { scope, _ in
            try await apply(scope)
        }
    }

    /// Registers a function plugin with a typed config, decoded strictly and passed to `apply` on every load.
    ///
    /// - Parameter provides: the services `apply` provides, so realm changes know to rebuild it.
    @available(
        *, deprecated,
        message: "register a FunctionPlugin, as in cordis-ios: catalog.register(FunctionPlugin<Config>(name:inject:provides:) { ctx, config, scope in … }, as: name)"
    )
    @CordisActor
    public mutating func register<C: Decodable>(
        name: String, config: C.Type, inject: [Dependency] = [], provides: [String] = [],
        _ apply: @escaping @CordisActor (EffectScope, C) async throws -> Void
    ) {
        let anchor = PluginAnchor()
        items[name] = Item(
            name: name, schema: ConfigSchema(of: C.self), injects: inject, provides: provides,
            prepare: { json in
                let config = try JSONValueDecoder().decode(C.self, from: Self.normalized(json))
                return PreparedPlugin(config: config) { ctx, config, extra in
                    let typed = try Self.cast(config, to: C.self, plugin: name)
                    return try ctx.spawn(
                        PluginRunner.forFunction(
                            name: name, dependencies: inject, provides: provides, config: typed, anchor: anchor,
                            apply: apply),
                        injecting: extra)
                }
            },
            encode: { config in Self.encode(config, as: C.self) }, anchor: anchor)
    }

    /// Registers a `FunctionPlugin` under `name`: entries' configs are decoded strictly as `C` and checked
    /// by the plugin's `validate`, so a refused one is an invalid config like any other.
    @CordisActor
    mutating func register<C>(_ plugin: FunctionPlugin<C>, named name: String) {
        items[name] = Item(
            name: name, schema: ConfigSchema(of: C.self), injects: plugin.dependencies, provides: plugin.provides,
            prepare: { json in
                let decoded = try JSONValueDecoder().decode(C.self, from: Self.normalized(json))
                return PreparedPlugin(config: try plugin.validated(decoded)) { ctx, config, extra in
                    try ctx.spawn(plugin.runner(config: Self.cast(config, to: C.self, plugin: name)), injecting: extra)
                }
            },
            encode: { config in Self.encode(config, as: C.self) }, plugin: plugin)
    }

    /// The plugin registered under `name`, if any.
    public func item(named name: String) -> Item? {
        items[name]
    }

    /// The plugin registered under `name` as a plugin value, if any (cordis-ios's `resolve(_:)`): the
    /// `PluginType` of a plugin type, the `FunctionPlugin` registered, or for a closure registered by
    /// name a plugin that starts it (with a `JSONValue` config or nil). `ctx.plugin(_:rawConfig:)`
    /// starts it, and `register(_:as:)` registers it again.
    public func resolve(_ name: String) -> (any AnyPlugin)? {
        guard let item = items[name] else { return nil }
        return item.plugin ?? CatalogPlugin(item: item)
    }

    /// Whether a plugin is registered under `name`.
    public func contains(_ name: String) -> Bool {
        items[name] != nil
    }

    /// The registered names, sorted.
    public var names: [String] { items.keys.sorted() }

    /// Every registered plugin, sorted by name.
    public var plugins: [Item] { names.compactMap { items[$0] } }

    /// A missing config is decoded as `{}`.
    private static func normalized(_ json: JSONValue) -> JSONValue {
        json == .null ? .object(JSONObject()) : json
    }

    private static func cast<C>(_ config: Any, to type: C.Type, plugin: String) throws -> C {
        guard let typed = config as? C else {
            throw CordisError(.typeMismatch, "plugin \(plugin) takes a config of type \(C.self), not \(Swift.type(of: config))")
        }
        return typed
    }

    private static func encode<C>(_ config: Any, as type: C.Type) -> JSONValue? {
        guard let encodable = config as? any Encodable else { return nil }
        return try? JSONValueEncoder().encode(encodable)
    }
}

/// A config decoded and checked for one plugin, ready to start a fiber with it or to update one.
@CordisActor
struct PreparedPlugin {
    /// The decoded config, as `Fiber.update(config:)` takes it.
    let config: Any
    /// Starts a fiber of the plugin on a context with a config (this one) and extra injected services.
    let starter: @CordisActor (Context, Any, [Dependency]) throws -> Fiber

    init(config: Any, starter: @escaping @CordisActor (Context, Any, [Dependency]) throws -> Fiber) {
        self.config = config
        self.starter = starter
    }

    /// Starts a fiber of the plugin with this config on `ctx`, injecting `extra` services beside its own.
    func start(_ ctx: Context, injecting extra: [Dependency] = []) throws -> Fiber {
        try starter(ctx, config, extra)
    }
}

/// A plugin registered in a catalog by name and closure, as a plugin value (what `resolve(_:)` returns
/// for it).
struct CatalogPlugin: AnyPlugin {
    let item: PluginCatalog.Item

    @CordisActor var name: String? { item.name }

    /// The identity the registration's fibers share.
    var identity: PluginIdentity { item.identity }

    /// Starts the plugin with a `JSONValue` config (nil is `{}`).
    ///
    /// - Throws: `CordisError` `.typeMismatch` for a config of another type; the item's config errors.
    @CordisActor
    func start(on ctx: Context, rawConfig: (any Sendable)?) throws -> Fiber {
        let json: JSONValue
        switch rawConfig {
        case nil: json = .null
        case let value as JSONValue: json = value
        case let other?:
            throw CordisError(.typeMismatch, "plugin \(item.name) takes a JSON config, not \(type(of: other))")
        }
        return try item.prepare(json).start(ctx)
    }

    @CordisActor
    func register(in catalog: inout PluginCatalog, as name: String) {
        catalog.items[name] = item
    }
}
