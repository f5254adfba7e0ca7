import CordisDiscovery
import CordisWire
import Synchronization

/// Renews a node's etcd lease away from the node's actor, so that the renewals go out at a third of the
/// TTL however busy the actor is (a burst of thousands of directory changes, thousands of fibers
/// loading): a busy node must not lose its membership for it. What each renewal came to reaches the
/// actor in order through `outcomes`, where `LeaseRule` decides what it means; the keeper decides
/// nothing but when to try again (at a third of the TTL, sooner with a backoff after a failure).
final class LeaseKeeper: Sendable {
    /// What one renewal came to, and for which lease.
    struct Outcome: Sendable, Equatable {
        /// `.kept`, `.unanswered` or `.leaseNotFound`, with the instant it was known.
        let event: LeaseRule.Event
        /// The lease it concerns (0: none was held yet).
        let lease: Int64
    }

    private let client: EtcdClient
    private let ttl: Duration
    /// The loop whose timers space the renewals.
    private let loop: EventLoop
    private let current = Mutex<Int64>(0)
    /// The outcomes, oldest first; the newest 64 are kept if the actor falls behind (each carries its
    /// instant, and the rule only needs the latest ones).
    let outcomes: AsyncStream<Outcome>
    private let continuation: AsyncStream<Outcome>.Continuation

    /// A keeper of the leases `client` grants with time to live `ttl`, waiting between renewals on
    /// `loop`'s timers.
    init(client: EtcdClient, ttl: Duration, loop: EventLoop) {
        self.client = client
        self.ttl = ttl
        self.loop = loop
        (outcomes, continuation) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(64))
    }

    /// The lease renewed from now on (0: none).
    var lease: Int64 {
        get { current.withLock { $0 } }
        set { current.withLock { $0 = newValue } }
    }

    /// Renews the lease until the calling task is cancelled, then finishes `outcomes`. Runs on the
    /// global executor, never on the node's actor.
    @concurrent func run() async {
        var backoff = ReconnectBackoff(first: .milliseconds(100), maximum: ttl / 3)
        var failing = false
        while !Task.isCancelled {
            let delay = failing ? backoff.next(random: Double.random(in: 0...1)) : ttl / 3
            await loop.pause(for: delay)
            if Task.isCancelled { break }
            let lease = self.lease
            do {
                if lease == 0 { throw EtcdError(.leaseNotFound, "no lease yet") }
                // The renewal must land before the lease ends: a third of the TTL passed since the last.
                _ = try await client.keepAlive(lease: lease, within: ttl * 2 / 3)
                failing = false
                backoff.reset()
                continuation.yield(Outcome(event: .kept(at: .now), lease: lease))
            } catch let error as EtcdError where error.code == .leaseNotFound {
                failing = true
                continuation.yield(Outcome(event: .leaseNotFound, lease: lease))
            } catch {
                failing = true
                continuation.yield(Outcome(event: .unanswered(at: .now, reason: "\(error)"), lease: lease))
            }
        }
        continuation.finish()
    }
}
