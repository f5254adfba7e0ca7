import CordisJSON

/// How a fiber makes and runs its plugin: the name, dependencies, config, and type-erased factories.
@CordisActor
struct PluginRunner {
    /// A loaded plugin: its instance (nil for function plugins), `apply`, and the services it provides.
    struct Loaded {
        var object: AnyObject?
        var apply: @CordisActor (EffectScope) async throws -> Void
        var provisions: @CordisActor () -> [ServiceProvision]
    }

    var name: String
    var dependencies: [Dependency]
    var provides: [String]
    var config: Any
    var instantiate: @CordisActor (Context) throws -> Loaded
    /// Returns a runner with another config (typed); throws on a type mismatch.
    var reconfiguredWith: @CordisActor (Any) throws -> PluginRunner
    /// Returns a runner with another config decoded from JSON; throws a config error.
    var reconfiguredWithJSON: @CordisActor (JSONValue) throws -> PluginRunner

    func reconfigured(_ config: Any) throws -> PluginRunner { try reconfiguredWith(config) }
    func reconfigured(json: JSONValue) throws -> PluginRunner { try reconfiguredWithJSON(json) }

    /// A runner for a plugin type with a decoded config.
    static func forType<P: Plugin>(_ type: P.Type, config: P.Config) -> PluginRunner {
        PluginRunner(
            name: P.name, dependencies: P.injects, provides: P.provides, config: config,
            instantiate: { ctx in
                let instance = P(ctx: ctx, config: config)
                return Loaded(object: instance, apply: { try await instance.apply($0) }, provisions: { instance.provisions() })
            },
            reconfiguredWith: { value in
                guard let typed = value as? P.Config else {
                    throw CordisError(
                        .typeMismatch, "plugin \(P.name) takes a config of type \(P.Config.self), not \(Swift.type(of: value))")
                }
                return forType(P.self, config: typed)
            },
            reconfiguredWithJSON: { json in
                try forType(P.self, config: ConfigDecoding.decode(P.Config.self, from: json, plugin: P.name))
            })
    }

    /// A runner for a function plugin.
    static func forFunction<C: Decodable>(
        name: String, dependencies: [Dependency], config: C,
        apply: @escaping @CordisActor (EffectScope, C) async throws -> Void
    ) -> PluginRunner {
        PluginRunner(
            name: name, dependencies: dependencies, provides: [], config: config,
            instantiate: { _ in Loaded(object: nil, apply: { try await apply($0, config) }, provisions: { [] }) },
            reconfiguredWith: { value in
                guard let typed = value as? C else {
                    throw CordisError(.typeMismatch, "plugin \(name) takes a config of type \(C.self), not \(Swift.type(of: value))")
                }
                return forFunction(name: name, dependencies: dependencies, config: typed, apply: apply)
            },
            reconfiguredWithJSON: { json in
                let typed = try ConfigDecoding.decode(C.self, from: json, plugin: name)
                return forFunction(name: name, dependencies: dependencies, config: typed, apply: apply)
            })
    }
}
