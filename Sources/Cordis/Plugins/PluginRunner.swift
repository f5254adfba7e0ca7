import CordisJSON

/// How a fiber makes and runs its plugin: the name, dependencies, config, and how to instantiate it or
/// replace its config.
///
/// One object per runner holds all of it (a plugin type with its config, or a function plugin with its
/// `apply`), so a fiber's plugin costs one allocation, not one per closure.
@CordisActor
struct PluginRunner {
    /// A loaded plugin: its instance (nil for function plugins), `apply`, and the services it provides.
    struct Loaded {
        var object: AnyObject?
        var apply: @CordisActor (EffectScope) async throws -> Void
        var provisions: @CordisActor () -> [ServiceProvision]
    }

    private let definition: any PluginDefinition
    /// The services it injects, kept here too: a fiber reads them on every step, and this saves it a
    /// visit to the definition.
    let dependencies: [Dependency]

    private init(_ definition: any PluginDefinition) {
        self.definition = definition
        self.dependencies = definition.dependencies
    }

    /// The same runner injecting `extra` services too (a Loader entry's `inject`), kept across config
    /// changes; a service the plugin injects itself keeps the plugin's own terms.
    func injecting(_ extra: [Dependency]) -> PluginRunner {
        extra.isEmpty ? self : PluginRunner(InjectingDefinition(definition, extra: extra))
    }

    /// The plugin's name; `unnamed` for a function plugin given none.
    var name: String { definition.name }
    /// The name of a function plugin given none: its fiber takes the name of the fiber it was started
    /// from (cordis-ios's nearest named ancestor), and its `Runtime` has no name.
    static let unnamed = ""
    /// Which plugin the fiber is a fiber of (kept across config changes).
    var identity: PluginIdentity { definition.identity }
    /// The services it injects with the intercept config each carries (nil for none).
    var injections: [Injection] { definition.injections }
    var provides: [String] { definition.provides }
    var config: Any { definition.config }

    func instantiate(_ ctx: Context) throws -> Loaded { try definition.instantiate(ctx) }

    /// A runner with another config (typed); throws on a type mismatch.
    func reconfigured(_ config: Any) throws -> PluginRunner { try definition.reconfigured(config) }

    /// A runner with another config decoded from JSON; throws a config error.
    func reconfigured(json: JSONValue) throws -> PluginRunner { try definition.reconfigured(json: json) }

    /// A runner for a plugin type with a decoded config.
    static func forType<P: Plugin>(_ type: P.Type, config: P.Config) -> PluginRunner {
        PluginRunner(TypeDefinition<P>(config: config))
    }

    /// A runner for a function plugin; `provides` names the services its `apply` provides (a catalog
    /// entry's), so a dependency cycle through them is seen before they are provided.
    /// `validate` checks each later config (`Fiber.update`) as it checked this one. `anchor` is the
    /// plugin's identity (a `FunctionPlugin`'s or a catalog registration's); without one the runner is a
    /// plugin of its own. `injections` are the intercept configs its services carry (for `fiber.inject`).
    static func forFunction<C: Decodable>(
        name: String, dependencies: [Dependency], provides: [String] = [], config: C,
        anchor: AnyObject? = nil, injections: [Injection] = [],
        validate: (@CordisActor (C) throws -> C)? = nil,
        apply: @escaping @CordisActor (EffectScope, C) async throws -> Void
    ) -> PluginRunner {
        PluginRunner(
            FunctionDefinition(
                name: name, dependencies: dependencies, provides: provides, config: config, anchor: anchor,
                injections: injections, validate: validate, apply: apply))
    }
}

/// What a runner knows of its plugin.
@CordisActor
private protocol PluginDefinition: AnyObject {
    var name: String { get }
    var identity: PluginIdentity { get }
    var dependencies: [Dependency] { get }
    var injections: [Injection] { get }
    var provides: [String] { get }
    var config: Any { get }
    func instantiate(_ ctx: Context) throws -> PluginRunner.Loaded
    func reconfigured(_ config: Any) throws -> PluginRunner
    func reconfigured(json: JSONValue) throws -> PluginRunner
}

/// A plugin type `P` with its config.
@CordisActor
private final class TypeDefinition<P: Plugin>: PluginDefinition {
    let typedConfig: P.Config
    // Read once: the type's static members may build them anew on every read.
    let name = P.name
    let dependencies = P.allDependencies
    let injections = P.injections
    let provides = P.provides

    init(config: P.Config) {
        typedConfig = config
    }

    var identity: PluginIdentity { .type(ObjectIdentifier(P.self)) }

    var config: Any { typedConfig }

    func instantiate(_ ctx: Context) throws -> PluginRunner.Loaded {
        let instance = P(ctx: ctx.intercepting(injections), config: typedConfig)
        return PluginRunner.Loaded(
            object: instance, apply: { try await instance.apply($0) }, provisions: { instance.provisions() })
    }

    func reconfigured(_ config: Any) throws -> PluginRunner {
        guard let typed = config as? P.Config else {
            throw CordisError(
                .typeMismatch, "plugin \(name) takes a config of type \(P.Config.self), not \(type(of: config))")
        }
        return try PluginRunner.forType(P.self, config: P.validated(typed))
    }

    func reconfigured(json: JSONValue) throws -> PluginRunner {
        try PluginRunner.forType(P.self, config: P.validated(ConfigDecoding.decode(P.Config.self, from: json, plugin: name)))
    }
}

/// Another definition whose fiber injects `extra` services beside the plugin's own (kept when the config
/// changes).
@CordisActor
private final class InjectingDefinition: PluginDefinition {
    let inner: any PluginDefinition
    let extra: [Dependency]
    let dependencies: [Dependency]

    init(_ inner: any PluginDefinition, extra: [Dependency]) {
        self.inner = inner
        self.extra = extra
        let own = inner.dependencies
        self.dependencies = own + extra.filter { added in !own.contains { $0.name == added.name } }
    }

    var name: String { inner.name }
    var identity: PluginIdentity { inner.identity }
    var injections: [Injection] { inner.injections }
    var provides: [String] { inner.provides }
    var config: Any { inner.config }

    func instantiate(_ ctx: Context) throws -> PluginRunner.Loaded { try inner.instantiate(ctx) }

    func reconfigured(_ config: Any) throws -> PluginRunner { try inner.reconfigured(config).injecting(extra) }

    func reconfigured(json: JSONValue) throws -> PluginRunner { try inner.reconfigured(json: json).injecting(extra) }
}

/// A function plugin: its name, dependencies, config and `apply`.
@CordisActor
private final class FunctionDefinition<C: Decodable>: PluginDefinition {
    let name: String
    let dependencies: [Dependency]
    let provides: [String]
    let typedConfig: C
    /// The object whose identity is the plugin's; nil when this definition is its own (a closure started
    /// once), and then the definitions made from it by a config change keep this one as their anchor.
    let anchor: AnyObject?
    let injections: [Injection]
    let validate: (@CordisActor (C) throws -> C)?
    let apply: @CordisActor (EffectScope, C) async throws -> Void

    init(
        name: String, dependencies: [Dependency], provides: [String], config: C, anchor: AnyObject?,
        injections: [Injection], validate: (@CordisActor (C) throws -> C)?,
        apply: @escaping @CordisActor (EffectScope, C) async throws -> Void
    ) {
        self.name = name
        self.dependencies = dependencies
        self.provides = provides
        self.typedConfig = config
        self.anchor = anchor
        self.injections = injections
        self.validate = validate
        self.apply = apply
    }

    var identity: PluginIdentity { .function(ObjectIdentifier(anchor ?? self)) }

    private func checked(_ config: C) throws -> PluginRunner {
        PluginRunner.forFunction(
            name: name, dependencies: dependencies, provides: provides, config: try validate?(config) ?? config,
            anchor: anchor ?? self, injections: injections, validate: validate, apply: apply)
    }

    var config: Any { typedConfig }

    func instantiate(_ ctx: Context) throws -> PluginRunner.Loaded {
        let apply = self.apply
        let config = typedConfig
        return PluginRunner.Loaded(object: nil, apply: { try await apply($0, config) }, provisions: { [] })
    }

    func reconfigured(_ config: Any) throws -> PluginRunner {
        guard let typed = config as? C else {
            throw CordisError(.typeMismatch, "plugin \(name) takes a config of type \(C.self), not \(type(of: config))")
        }
        return try checked(typed)
    }

    func reconfigured(json: JSONValue) throws -> PluginRunner {
        let typed = try ConfigDecoding.decode(C.self, from: json, plugin: name)
        return try checked(typed)
    }
}
