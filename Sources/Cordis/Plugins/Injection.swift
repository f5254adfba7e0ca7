/// A service a function plugin injects, with the intercept config its context carries for that service
/// (cordis-ios's `Injection`, for `FunctionPlugin(injections:)`).
public struct Injection: Sendable {
    /// The service's name.
    public let name: String
    /// The intercept config for it, or nil for none.
    public let config: (any Sendable)?
    /// Whether the plugin runs without the service too (it still reloads when the provider changes);
    /// cordis-ios's injections are all required.
    public let optional: Bool

    /// Injects the service of `key`, with `config` as its intercept config; `optional` lets the plugin
    /// run while the service is not provided.
    public init<K: ServiceKey>(_ key: K.Type, config: (any Sendable)? = nil, optional: Bool = false) {
        self.init(name: K.name, config: config, optional: optional)
    }

    /// Injects the service named `name`, with `config` as its intercept config; `optional` as above.
    public init(name: String, config: (any Sendable)? = nil, optional: Bool = false) {
        self.name = name
        self.config = config
        self.optional = optional
    }

    /// The injections of `keys`, without configs.
    public static func inject(_ keys: [any ServiceKey.Type]) -> [Injection] {
        keys.map { Injection(name: $0.name) }
    }
}

extension Injection {
    /// `dependencies`, then one for each injection whose service is not among them yet.
    static func dependencies(_ dependencies: [Dependency], adding injections: [Injection]) -> [Dependency] {
        var names = Set(dependencies.map(\.name))
        return dependencies + injections.filter { names.insert($0.name).inserted }.map { Dependency(name: $0.name, optional: $0.optional) }
    }
}

extension Context {
    /// This context, carrying the config of each injection that has one as the intercept config of its
    /// service (itself when none has).
    func intercepting(_ injections: [Injection]) -> Context {
        var ctx = self
        for injection in injections {
            if let config = injection.config { ctx = ctx.intercept(name: injection.name, stored: config) }
        }
        return ctx
    }
}
