/// A typed name for a service: `Value` is what consumers get, `name` is how the registry knows it.
///
/// ```swift
/// enum ClockKey: ServiceKey {
///   typealias Value = ClockService
///   static let name = "clock"
/// }
/// ```
/// A key whose `Value` is a protocol marked `@Remote` can be provided across nodes; a key whose
/// `Value` is a concrete class stays local to its node.
public protocol ServiceKey {
    /// The type consumers receive.
    associatedtype Value
    /// The service's name, unique in its realm.
    static var name: String { get }
}
