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
        package init(_ message: WireMessage) {
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

        /// The kind's place in `allCases`, where the counter keeps its tallies (counting a message
        /// hashes nothing).
        fileprivate var slot: Int {
            switch self {
            case .heartbeat: 0
            case .membership: 1
            case .announcement: 2
            case .call: 3
            case .control: 4
            case .etcd: 5
            case .other: 6
            }
        }
    }

    /// The counts so far.
    public struct Counts: Sendable, Equatable {
        /// Messages sent, by kind (a kind never sent is absent).
        public var sent: [Kind: Int] = [:]
        /// Messages received, by kind.
        public var received: [Kind: Int] = [:]

        /// No messages.
        package init() {}
    }

    /// Messages sent and received, by `Kind.slot`.
    private struct Tallies {
        var sent = [Int](repeating: 0, count: Kind.allCases.count)
        var received = [Int](repeating: 0, count: Kind.allCases.count)
    }

    private let tallies = Mutex(Tallies())

    /// When the counter started counting.
    public let since = ContinuousClock.now

    /// A counter at zero.
    public init() {}

    /// Counts one message sent.
    package func sent(_ message: WireMessage) { count(Kind(message), sent: 1) }

    /// Counts one message received.
    package func received(_ message: WireMessage) { count(Kind(message), received: 1) }

    /// Adds `sent` and `received` messages of `kind`.
    package func count(_ kind: Kind, sent: Int = 0, received: Int = 0) {
        tallies.withLock { tallies in
            tallies.sent[kind.slot] &+= sent
            tallies.received[kind.slot] &+= received
        }
    }

    /// The counts so far.
    public var snapshot: Counts {
        let tallies = tallies.withLock { $0 }
        var counts = Counts()
        for kind in Kind.allCases {
            if tallies.sent[kind.slot] > 0 { counts.sent[kind] = tallies.sent[kind.slot] }
            if tallies.received[kind.slot] > 0 { counts.received[kind] = tallies.received[kind.slot] }
        }
        return counts
    }

    /// Counters are equal when they are the same counter.
    public static func == (lhs: TrafficCounter, rhs: TrafficCounter) -> Bool { lhs === rhs }

    /// Hashes the counter's identity.
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
}
