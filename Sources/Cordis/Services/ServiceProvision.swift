/// A service instance offered by a plugin under a key; `@Service` generates these.
@CordisActor
public struct ServiceProvision {
    /// The service name.
    public let name: String
    /// The instance, typed as the key's `Value`.
    let value: Any

    /// Offers `value` as the service of `key`.
    public init<K: ServiceKey>(_ key: K.Type, _ value: K.Value) {
        self.name = K.name
        self.value = value
    }

    /// Offers `value` as the service `name`; the caller has checked it is the key's `Value`.
    init(name: String, value: Any) {
        self.name = name
        self.value = value
    }
}
