import Cordis

/// What the built-in `clock` service answers: the providing node and its time.
public struct ClockReading: Codable, Sendable, Hashable {
    /// The node that provides the clock.
    public var node: String
    /// Seconds since 1970.
    public var seconds: Double

    /// Creates a reading.
    public init(node: String, seconds: Double) {
        self.node = node
        self.seconds = seconds
    }
}

/// The built-in `clock` service's interface.
@Remote
public protocol ClockAPI: Sendable {
    /// The providing node's name and time.
    nonisolated(nonsending) func now() async throws -> ClockReading
}

/// The key of the built-in remote service `clock`.
public enum ClockServiceKey: RemoteServiceKey {
    /// Consumers get the interface.
    public typealias Value = any ClockAPI
    /// The generated interface descriptor.
    public typealias Interface = ClockAPIRemote
    /// `clock`.
    public static let name = "clock"
}
