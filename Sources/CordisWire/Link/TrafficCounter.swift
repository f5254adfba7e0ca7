import Synchronization

/// Counts the messages a node sends and receives, by kind: every link of the node (and its etcd
/// client) adds to one counter, which the `traffic` control command reports. Safe from any thread.
public final class TrafficCounter: Sendable, Hashable {
    /// What a message is for.
    public enum Kind: String, CaseIterable, Sendable, Comparable {
        /// `ping` and `pong`.
        case heartbeat
        /// `members` (the mesh's gossip) and `goodbye`.
        case membership
        /// `announce`, `withdraw` and `withdrawAck`.
        case announcement
        /// `call`, `result`, `error` and `cancel`.
        case call
        /// `request`, `response` and `event`.
        case control
        /// Requests to etcd and their answers, watch messages included (etcd mode).
        case etcd
        /// Anything else after the handshake (a type this version does not know; the handshake's own
        /// messages are not counted).
        case other

        /// The kind of `message`.
        public init(_ message: WireMessage) {
            switch message {
            case .ping, .pong: self = .heartbeat
            case .members, .goodbye: self = .membership
            case .announce, .withdraw, .withdrawAck: self = .announcement
            case .call, .result, .error, .cancel: self = .call
            case .request, .response, .event: self = .control
            case .hello, .challenge, .proof, .welcome, .reject, .unknown: self = .other
            }
        }

        /// Kinds sort by name.
        public static func < (lhs: Kind, rhs: Kind) -> Bool { lhs.rawValue < rhs.rawValue }
    }

    /// The counts so far.
    public struct Counts: Sendable, Equatable {
        /// Messages sent, by kind (a kind never sent is absent).
        public var sent: [Kind: Int] = [:]
        /// Messages received, by kind.
        public var received: [Kind: Int] = [:]

        /// No messages.
        public init() {}
    }

    private let counts = Mutex(Counts())

    /// A counter at zero.
    public init() {}

    /// Counts one message sent.
    public func sent(_ message: WireMessage) { count(Kind(message), sent: 1) }

    /// Counts one message received.
    public func received(_ message: WireMessage) { count(Kind(message), received: 1) }

    /// Adds `sent` and `received` messages of `kind`.
    public func count(_ kind: Kind, sent: Int = 0, received: Int = 0) {
        counts.withLock { counts in
            if sent > 0 { counts.sent[kind, default: 0] &+= sent }
            if received > 0 { counts.received[kind, default: 0] &+= received }
        }
    }

    /// The counts so far.
    public var snapshot: Counts { counts.withLock { $0 } }

    /// Counters are equal when they are the same counter.
    public static func == (lhs: TrafficCounter, rhs: TrafficCounter) -> Bool { lhs === rhs }

    /// Hashes the counter's identity.
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
}
