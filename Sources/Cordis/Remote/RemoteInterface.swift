/// A service interface usable across processes; `@Remote` on a protocol `P` generates `PRemote`
/// conforming to it (the proxy and the dispatcher).
public protocol RemoteInterface: SendableMetatype {
    /// The existential consumers inject (`any P`).
    associatedtype API
    /// The interface's name (the protocol's name).
    static var name: String { get }
    /// A version derived from the method signatures: nodes that disagree do not call each other.
    static var version: String { get }
    /// The method names, for inspection.
    static var methods: [String] { get }
    /// A proxy that sends every call to `endpoint`.
    static func proxy(_ endpoint: any RemoteEndpoint) -> API
    /// Runs a call on a local instance (on `CordisActor`, where providers live): decodes the arguments, calls the method, encodes the result.
    ///
    /// - Throws: `RemoteCallError` `.unknownMethod` or `.invalidArguments`; whatever the method throws.
    @CordisActor
    static func dispatch(_ instance: API, method: String, arguments: JSONObject) async throws -> JSONValue
}

/// A service key whose service can be provided across nodes: its `Value` is a `@Remote` protocol's
/// existential and `Interface` the generated descriptor.
public protocol RemoteServiceKey: ServiceKey where Interface.API == Value {
    /// The generated descriptor of the interface (`ClockAPIRemote` for `@Remote protocol ClockAPI`).
    associatedtype Interface: RemoteInterface
}
