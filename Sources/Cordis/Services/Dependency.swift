/// A service a plugin injects: the fiber runs only while every required dependency is provided.
public struct Dependency: Sendable, Hashable, CustomStringConvertible {
    /// The service name.
    public let name: String
    /// Whether the fiber may run without it (it still reloads when the provider changes).
    public let optional: Bool

    /// Declares a dependency on the service of `key`.
    public init<K: ServiceKey>(_ key: K.Type, optional: Bool = false) {
        self.init(name: K.name, optional: optional)
    }

    /// Declares a dependency on a service by name.
    public init(name: String, optional: Bool = false) {
        self.name = name
        self.optional = optional
    }

    /// The service name, with `?` when optional.
    public var description: String { optional ? name + "?" : name }
}
