/// A failure talking to etcd: unreachable, an error answer, or an answer that cannot be read.
package struct EtcdError: Error, Equatable, Sendable, CustomStringConvertible {
    /// What kind of failure.
    package struct Code: RawRepresentable, Hashable, Sendable {
        package var rawValue: String
        package init(rawValue: String) { self.rawValue = rawValue }

        /// A discovery setting or URL that cannot be used.
        package static let invalidEndpoint = Code(rawValue: "invalid-endpoint")
        /// No endpoint answered (connection refused, timeout, connection lost).
        package static let unavailable = Code(rawValue: "unavailable")
        /// etcd answered with an error (its message is kept).
        package static let refused = Code(rawValue: "refused")
        /// The answer is not what the gateway sends (not JSON, missing fields, over a bound).
        package static let malformed = Code(rawValue: "malformed")
        /// The lease is gone (expired or revoked).
        package static let leaseNotFound = Code(rawValue: "lease-not-found")
        /// The watched revision was compacted away: list again.
        package static let compacted = Code(rawValue: "compacted")
        /// A watch produced more than its consumer took (its buffer is bounded): list again.
        package static let overflow = Code(rawValue: "overflow")
    }

    /// The kind of failure.
    package var code: Code
    /// What happened, for a log line.
    package var message: String

    package init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    package var description: String { message }
}
