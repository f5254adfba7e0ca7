import CordisJSON

/// A plugin value that a context or a catalog can start (cordis-ios's `AnyPlugin`): a `FunctionPlugin`,
/// or a plugin type wrapped in `PluginType`.
///
/// Start one with `ctx.plugin(_:rawConfig:)` or register it with `catalog.register(_:as:)`; `identity`
/// finds its fibers in `ctx.registry`. cordis-ios's `makeRuntime()` has no counterpart: a `Runtime` here
/// is a view of a plugin's live fibers (`ctx.registry.get(plugin)`), not something a plugin makes.
public protocol AnyPlugin: Sendable {
    /// The plugin's name in logs and status; nil for an anonymous function plugin.
    @CordisActor var name: String? { get }
    /// Which plugin its fibers are fibers of (cordis-ios's `identity`): the same for every fiber started
    /// from this value. A conforming type that does not say is identified by its type.
    var identity: PluginIdentity { get }
    /// Starts a fiber of the plugin under `ctx`'s fiber with `rawConfig`: a value of the plugin's config
    /// type, a `JSONValue` (decoded strictly), or nil (the config decoded from `{}`).
    ///
    /// - Throws: `CordisError` `.invalidConfig` when the config does not decode or is refused by the
    ///   plugin's validation, `.typeMismatch` for a value of another type, `.inactiveEffect` when `ctx`'s
    ///   fiber is not loading or active.
    @CordisActor func start(on ctx: Context, rawConfig: (any Sendable)?) throws -> Fiber
    /// Registers the plugin in `catalog` under `name`, so Loader entries can name it.
    @CordisActor func register(in catalog: inout PluginCatalog, as name: String)
}

extension AnyPlugin {
    /// The conforming type's identity.
    public var identity: PluginIdentity { .type(ObjectIdentifier(Self.self)) }
}

/// A plugin type as a plugin value (cordis-ios's `PluginType<P>`), for the places that take `AnyPlugin`.
public struct PluginType<P: Plugin>: AnyPlugin {
    /// Wraps `P`.
    public init(_ type: P.Type = P.self) {}

    /// `P.name`.
    @CordisActor public var name: String? { P.name }

    /// `P`'s identity: every fiber of `P`, however it was started, is a fiber of this plugin.
    public var identity: PluginIdentity { .type(ObjectIdentifier(P.self)) }

    /// Starts `P` as `ctx.plugin(P.self, config:)` does, with the config resolved from `rawConfig`.
    @CordisActor
    public func start(on ctx: Context, rawConfig: (any Sendable)?) throws -> Fiber {
        try ctx.plugin(P.self, config: ConfigResolution.resolve(rawConfig, as: P.Config.self, plugin: P.name))
    }

    /// Registers `P` as `catalog.register(P.self, as:)` does.
    @CordisActor
    public func register(in catalog: inout PluginCatalog, as name: String) {
        catalog.register(P.self, as: name)
    }
}

/// A plugin written as a closure (cordis-ios's `FunctionPlugin`): its name, the services it injects, an
/// optional check of its config, and `apply`, run with the fiber's context, its config and its scope
/// every time the fiber loads.
///
/// ```swift
/// let greeter = FunctionPlugin<NoConfig>(name: "greeter", inject: [ClockKey.self]) { ctx, _, scope in
///   print("hello at \(try ctx[ClockKey.self].now())")
/// }
/// try root.plugin(greeter)
/// ```
public struct FunctionPlugin<Config: Decodable & Sendable>: AnyPlugin {
    /// What runs when the fiber loads: its context, its config and the scope its effects go to.
    public typealias Apply = @CordisActor @Sendable (Context, Config, EffectScope) async throws -> Void

    /// The plugin's name (`anonymous` in logs and status when nil).
    public let name: String?
    /// The services its fibers inject; they run only while all of them are provided.
    public let dependencies: [Dependency]
    /// The services its fibers inject, each with the intercept config its context carries for it
    /// (cordis-ios's `injections`; the ones given as `inject` have none).
    public let injections: [Injection]
    /// The names of the services it declares it provides, so a realm change rebuilds its fibers and a
    /// catalog lists them (an addition: cordis-ios's function plugins do not declare what they provide).
    public let provides: [String]
    let body: Apply
    let validator: (@Sendable (Config) throws -> Void)?
    /// What the plugin's identity is: copies of this value share it, so their fibers are one plugin's.
    let anchor = PluginAnchor()

    /// The identity of this value and its copies (cordis-ios's `identity`): each `FunctionPlugin(…)` is a
    /// plugin of its own.
    public var identity: PluginIdentity { .function(ObjectIdentifier(anchor)) }

    /// Creates a function plugin.
    ///
    /// - Parameters:
    ///   - name: its name in logs and status.
    ///   - inject: the services it injects.
    ///   - provides: the services `apply` provides (see `provides`).
    ///   - validate: a check of each config before a fiber runs with it; throwing refuses the config.
    ///   - apply: what runs when the fiber loads.
    public init(
        name: String? = nil, inject: [any ServiceKey.Type] = [], provides: [any ServiceKey.Type] = [],
        validate: (@Sendable (Config) throws -> Void)? = nil, apply: @escaping Apply
    ) {
        self.init(name: name, inject: inject, injections: [], provides: provides, validate: validate, apply: apply)
    }

    /// Creates a function plugin whose injected services carry intercept configs (cordis-ios's
    /// `FunctionPlugin(injections:)`): the context `apply` receives carries each injection's config under
    /// the service's name, so `ctx.interceptConfig(Key.self)` (for an `InterceptKey` of that name) reads
    /// it there and in the plugins started from that context.
    ///
    /// - Parameters:
    ///   - name: its name in logs and status.
    ///   - inject: services it injects without a config.
    ///   - injections: services it injects, each with its config (nil for none).
    ///   - provides: the services `apply` provides (see `provides`).
    ///   - validate: a check of each config before a fiber runs with it; throwing refuses the config.
    ///   - apply: what runs when the fiber loads.
    public init(
        name: String? = nil, inject: [any ServiceKey.Type] = [], injections: [Injection],
        provides: [any ServiceKey.Type] = [], validate: (@Sendable (Config) throws -> Void)? = nil,
        apply: @escaping Apply
    ) {
        self.init(name: name, injections: Injection.inject(inject) + injections, providing: provides.map { $0.name },
                  validate: validate, apply: apply)
    }

    /// Creates a function plugin that provides services by name.
    init(
        name: String?, injections all: [Injection], providing provides: [String],
        validate: (@Sendable (Config) throws -> Void)?, apply: @escaping Apply
    ) {
        self.name = name
        self.provides = provides
        self.injections = all
        self.dependencies = Injection.dependencies([], adding: all)
        self.body = apply
        self.validator = validate
    }

    /// `config` when the plugin's `validate` accepts it.
    ///
    /// - Throws: `CordisError` `.invalidConfig`: `plugin "name": invalid config: <what validate threw>`.
    func validated(_ config: Config) throws -> Config {
        guard let validator else { return config }
        do {
            try validator(config)
        } catch {
            throw CordisError.refusedConfig(plugin: displayName, error)
        }
        return config
    }

    var displayName: String { name ?? "anonymous" }

    /// The runner of a fiber of this plugin with `config`.
    @CordisActor
    func runner(config: Config) -> PluginRunner {
        let body = self.body
        let plugin = self
        var validate: (@CordisActor (Config) throws -> Config)?
        if validator != nil {
            validate = { config in try plugin.validated(config) }
        }
        let injections = self.injections
        let apply: @CordisActor (EffectScope, Config) async throws -> Void = { scope, config in
            try await body(scope.ctx.intercepting(injections), config, scope)
        }
        return PluginRunner.forFunction(
            name: name ?? PluginRunner.unnamed, dependencies: dependencies, provides: provides, config: config, anchor: anchor,
            injections: injections,
            validate: validate, apply: apply)
    }

    /// Starts a fiber of this plugin under `ctx`'s fiber, as `ctx.plugin(_:config:)` does.
    @CordisActor
    public func start(on ctx: Context, rawConfig: (any Sendable)?) throws -> Fiber {
        let config = try validated(ConfigResolution.resolve(rawConfig, as: Config.self, plugin: displayName))
        return try ctx.spawn(runner(config: config))
    }

    /// Registers this plugin in `catalog` under `name`: entries' configs are decoded strictly as `Config`
    /// and checked by `validate`.
    @CordisActor
    public func register(in catalog: inout PluginCatalog, as name: String) {
        catalog.register(self, named: name)
    }
}

extension Context {
    /// Starts the function plugin `plugin` as a child of this context's fiber with `config`, or with the
    /// config decoded from `{}` when it is nil (cordis-ios's `ctx.plugin(_:config:)`).
    ///
    /// - Throws: `CordisError` `.invalidConfig` when the config is refused; `.inactiveEffect` when this
    ///   context's fiber is not loading or active.
    @discardableResult
    public func plugin<C>(_ plugin: FunctionPlugin<C>, config: C? = nil) throws -> Fiber {
        try plugin.start(on: self, rawConfig: config)
    }

    /// Starts a plugin value with a raw config: a value of its config type, a `JSONValue` (decoded
    /// strictly), or nil (decoded from `{}`) (cordis-ios's `ctx.plugin(_:rawConfig:)`).
    ///
    /// - Throws: as `AnyPlugin.start(on:rawConfig:)`.
    @discardableResult
    public func plugin(_ plugin: any AnyPlugin, rawConfig: (any Sendable)?) throws -> Fiber {
        try plugin.start(on: self, rawConfig: rawConfig)
    }
}

extension PluginCatalog {
    /// Registers a plugin value (a `FunctionPlugin`, or a `PluginType`) under `name` (cordis-ios's
    /// `catalog.register(_:as:)`).
    @CordisActor
    public mutating func register(_ plugin: some AnyPlugin, as name: String) {
        plugin.register(in: &self, as: name)
    }
}

/// How a raw config (cordis-ios's `rawConfig`) becomes a plugin's typed config.
enum ConfigResolution {
    /// A `C` is used as it is; nil and JSON `null` are decoded as `{}`; other JSON is decoded strictly.
    ///
    /// - Throws: `CordisError` `.invalidConfig` when JSON does not decode, `.typeMismatch` for a value of
    ///   another type.
    static func resolve<C: Decodable>(_ raw: (any Sendable)?, as type: C.Type, plugin: String) throws -> C {
        guard let raw else { return try ConfigDecoding.decode(C.self, from: .object([:]), plugin: plugin) }
        if let typed = raw as? C { return typed }
        if let json = raw as? JSONValue {
            return try ConfigDecoding.decode(C.self, from: json == .null ? .object([:]) : json, plugin: plugin)
        }
        throw CordisError(.typeMismatch, "plugin \(plugin) takes a config of type \(C.self), not \(Swift.type(of: raw))")
    }
}
