import Cordis

/// The services a node can share across the cluster: for each service name, its `@Remote` interface's
/// name and version, how to make a proxy, and how to run a call on a local instance.
public struct RemoteServiceCatalog: Sendable {
    /// One remote-capable service.
    public struct Service: Sendable {
        /// The service name.
        public let name: String
        /// The interface name.
        public let interface: String
        /// The interface version.
        public let version: String
        /// The interface's method names.
        public let methods: [String]
        let makeProxy: @Sendable (any RemoteEndpoint) -> Any
        let dispatch: @CordisActor @Sendable (Any, String, JSONObject) async throws -> JSONValue
    }

    private(set) var services: [String: Service] = [:]

    /// An empty catalog.
    public init() {}

    /// Makes the service of `key` shareable across nodes.
    public mutating func register<K: RemoteServiceKey>(_ key: K.Type) {
        services[K.name] = Service(
            name: K.name, interface: K.Interface.name, version: K.Interface.version, methods: K.Interface.methods,
            makeProxy: { K.Interface.proxy($0) },
            dispatch: { instance, method, arguments in
                guard let typed = instance as? K.Value else {
                    throw RemoteCallError(.failed, "service \(K.name) is not a \(K.Interface.name)")
                }
                return try await K.Interface.dispatch(typed, method: method, arguments: arguments)
            })
    }

    /// The registered services, by name.
    public var all: [Service] { services.values.sorted { $0.name < $1.name } }

    /// The registered service named `name`.
    public func service(named name: String) -> Service? { services[name] }

    /// Test support (for the package's test node only): this node claims interface version `version` for
    /// service `name` (announcing it, and judging peers' announcements by it), as a node built with another
    /// version of the interface would. Does nothing when `name` is not registered.
    package mutating func claimVersion(_ version: String, for name: String) {
        guard let service = services[name] else { return }
        services[name] = Service(
            name: service.name, interface: service.interface, version: version, methods: service.methods,
            makeProxy: service.makeProxy,
            dispatch: service.dispatch)
    }
}
