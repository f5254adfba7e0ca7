import Cordis

/// The built-in `counter` service's interface.
@Remote
public protocol CounterAPI: Sendable {
    /// Adds `delta` and returns the new value.
    nonisolated(nonsending) func add(_ delta: Int) async throws -> Int
    /// The current value.
    nonisolated(nonsending) func value() async throws -> Int
}

/// The key of the built-in remote service `counter`.
public enum CounterServiceKey: RemoteServiceKey {
    /// Consumers get the interface.
    public typealias Value = any CounterAPI
    /// The generated interface descriptor.
    public typealias Interface = CounterAPIRemote
    /// `counter`.
    public static let name = "counter"
}
