import Testing
@testable import Cordis

/// `body` did not finish before its deadline (it may be hung for good).
struct DeadlineExceeded: Error, CustomStringConvertible {
    let what: String
    var description: String { "\(what) did not finish within its deadline" }
}

/// The outcome of whichever finishes first: `body` or the deadline.
@CordisActor
private final class DeadlineRace<T: Sendable> {
    private var continuation: CheckedContinuation<T, any Error>?
    private var outcome: Result<T, any Error>?

    func finish(_ result: Result<T, any Error>) {
        guard outcome == nil else { return }
        outcome = result
        continuation?.resume(with: result)
        continuation = nil
    }

    func wait() async throws -> T {
        if let outcome { return try outcome.get() }
        return try await withCheckedThrowingContinuation { continuation = $0 }
    }
}

/// Runs `body` and returns its result, or throws `DeadlineExceeded` when it has not finished after
/// `seconds` (a hung body is left behind: the test fails instead of hanging).
@CordisActor @discardableResult
func withinDeadline<T: Sendable>(
    _ what: String, seconds: Int = 20, _ body: @escaping @CordisActor () async throws -> T
) async throws -> T {
    let race = DeadlineRace<T>()
    Task { @CordisActor in
        do { race.finish(.success(try await body())) } catch { race.finish(.failure(error)) }
    }
    let timer = Task { @CordisActor in
        try await Task.sleep(for: .seconds(seconds))
        race.finish(.failure(DeadlineExceeded(what: what)))
    }
    defer { timer.cancel() }
    return try await race.wait()
}
