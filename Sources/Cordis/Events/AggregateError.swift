/// Several errors at once: what `parallel` by `EventKey` throws when listeners fail (cordis-ios's
/// `AggregateError`).
///
/// It holds every listener's error (one or more) in registration order, after all listeners finished.
/// `parallel` with an `Event` value rethrows the first error instead.
public struct AggregateError: Error, Sendable, CustomStringConvertible {
    /// The errors, in the order of the listeners that threw them.
    public let errors: [any Error]

    /// Creates an error from the errors it gathers.
    public init(errors: [any Error]) {
        self.errors = errors
    }

    /// `AggregateError: ` then each error's description, separated by `; `.
    public var description: String {
        "AggregateError: " + errors.map { String(describing: $0) }.joined(separator: "; ")
    }
}
