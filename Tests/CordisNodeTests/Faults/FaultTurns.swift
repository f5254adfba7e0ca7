import Synchronization
import Testing

/// The fault suites take turns: one fault test at a time across all of them.
///
/// Each fault test starts several real nodes and kills, restarts, floods or stops them in a loop. Run
/// all at once beside the rest of the suite, they kept this machine's two cores so busy that in-process
/// tests with honest five-second deadlines (a handshake, an accept) missed them; one at a time they do
/// not. Waiting for a turn happens before the test's body, so it never counts against a test's own
/// deadlines.
struct FaultTurns: SuiteTrait, TestTrait, TestScoping {
    /// Applies to every test of a suite it marks.
    var isRecursive: Bool { true }

    func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        // Suites get a scope too; only test cases take a turn.
        guard testCase != nil else { return try await function() }
        await Self.gate.acquire()
        defer { Self.gate.release() }
        try await function()
    }

    /// The one gate all fault suites share.
    static let gate = TurnGate()
}

extension Trait where Self == FaultTurns {
    /// One fault test at a time across every suite so marked.
    static var faultTurns: FaultTurns { FaultTurns() }
}

/// A gate one holder passes at a time; the others wait in arrival order.
final class TurnGate: Sendable {
    private struct State {
        var held = false
        var waiters: [CheckedContinuation<Void, Never>] = []
    }

    private let state = Mutex(State())

    /// Waits until the gate is free, then holds it.
    func acquire() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let passNow = state.withLock { state -> Bool in
                if state.held {
                    state.waiters.append(continuation)
                    return false
                }
                state.held = true
                return true
            }
            if passNow { continuation.resume() }
        }
    }

    /// Frees the gate, handing it to the longest waiter if there is one.
    func release() {
        let next = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard !state.waiters.isEmpty else {
                state.held = false
                return nil
            }
            return state.waiters.removeFirst()
        }
        next?.resume()
    }
}
