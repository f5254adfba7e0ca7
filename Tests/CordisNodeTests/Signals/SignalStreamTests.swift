import Foundation
import Testing

@testable import CordisNode

/// The node's signals: one that arrives at any moment after the stream exists is delivered, never lost
/// (a SIGHUP sent as soon as a node is up must reload it; a SIGTERM must stop it).
@Suite("Node: signals", .serialized, .timeLimit(.minutes(1)))
struct SignalStreamTests {
    /// The stream's next signal, or nil when none comes within five seconds (the stream ends with the wait).
    private func next(of signals: SignalStream) async -> Int32? {
        await withTaskGroup(of: Int32?.self) { group in
            group.addTask {
                for await number in signals.stream { return number }
                return nil
            }
            group.addTask {
                try? await Task.sleep(for: .seconds(5))
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
    }

    /// Sends `number` to this process, as `kill` or systemd would (not to the calling thread: the
    /// concurrency pool's threads block signals).
    private func send(_ number: Int32) {
        kill(getpid(), number)
    }

    @Test("a signal sent the moment the stream exists is delivered")
    func aSignalSentAtOnceIsDelivered() async throws {
        let signals = SignalStream([SIGUSR2])
        send(SIGUSR2)
        #expect(await next(of: signals) == SIGUSR2)
    }

    @Test("two streams of one process each receive the signals they asked for, and only those")
    func twoStreamsReceiveTheirOwnSignals() async throws {
        let first = SignalStream([SIGUSR1])
        let second = SignalStream([SIGUSR1, SIGUSR2])
        send(SIGUSR2)
        #expect(await next(of: second) == SIGUSR2)
        send(SIGUSR1)
        #expect(await next(of: first) == SIGUSR1, "the first stream never asked for SIGUSR2")
    }
}
