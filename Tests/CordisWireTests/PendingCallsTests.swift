import CordisJSON
import Synchronization
import Testing
@testable import CordisWire

/// Timers a test fires by hand, so timeouts need no waiting.
final class ManualTimers: CallTimers {
    private struct State {
        var next: UInt64 = 1
        var jobs: [UInt64: (delay: Duration, job: @Sendable () -> Void)] = [:]
    }

    private let state = Mutex(State())

    func schedule(after delay: Duration, _ job: @escaping @Sendable () -> Void) -> UInt64 {
        state.withLock { state in
            defer { state.next += 1 }
            state.jobs[state.next] = (delay, job)
            return state.next
        }
    }

    func cancelTimer(_ id: UInt64) {
        _ = state.withLock { $0.jobs.removeValue(forKey: id) }
    }

    /// The delays of the timers not yet fired or cancelled.
    var armed: [Duration] { state.withLock { $0.jobs.values.map(\.delay) } }

    /// Runs every armed timer now; returns how many ran.
    @discardableResult
    func fireAll() -> Int {
        let jobs = state.withLock { state in
            defer { state.jobs.removeAll() }
            return state.jobs.values.map(\.job)
        }
        for job in jobs { job() }
        return jobs.count
    }
}

/// Records what a table sends, and lets a test await the n-th message.
final class Outbox: Sendable {
    private struct State {
        var messages: [WireMessage] = []
        var waiters: [(Int, CheckedContinuation<WireMessage, Never>)] = []
    }

    private let state = Mutex(State())

    var send: @Sendable (WireMessage) throws -> Void {
        { [self] message in record(message) }
    }

    var messages: [WireMessage] { state.withLock { $0.messages } }

    private func record(_ message: WireMessage) {
        let ready = state.withLock { state -> [CheckedContinuation<WireMessage, Never>] in
            state.messages.append(message)
            let index = state.messages.count - 1
            let ready = state.waiters.filter { $0.0 == index }.map(\.1)
            state.waiters.removeAll { $0.0 == index }
            return ready
        }
        for waiter in ready { waiter.resume(returning: message) }
    }

    /// The message sent at `index` (0 for the first), once it is sent; fails after a deadline.
    func message(_ index: Int) async throws -> WireMessage {
        try await withDeadline("message \(index) is sent", 5) { [self] in
            await withCheckedContinuation { continuation in
                let sent = state.withLock { state -> WireMessage? in
                    if index < state.messages.count { return state.messages[index] }
                    state.waiters.append((index, continuation))
                    return nil
                }
                if let sent { continuation.resume(returning: sent) }
            }
        }
    }

    /// The call sent at `index`.
    func call(_ index: Int) async throws -> RemoteCall {
        let message = try await message(index)
        guard case .call(let call) = message else { throw RemoteCallError(.init(rawValue: "test"), "expected a call, got \(message)") }
        return call
    }
}

private let addOne = CallRequest(service: "counter", method: "add", args: ["_0": 1])

/// Waits (with a deadline) for `task` to end and returns its outcome, the result's value on success.
private func outcome(_ task: Task<JSONDocument, any Error>) async throws -> Result<JSONValue, any Error> {
    try await withDeadline("the call ends", 5) { await task.result.map(\.value) }
}

private func failure(_ task: Task<JSONDocument, any Error>) async throws -> RemoteCallError? {
    guard case .failure(let error) = try await outcome(task) else { return nil }
    return error as? RemoteCallError
}

@Suite("PendingCalls")
struct PendingCallsTests {
    let timers = ManualTimers()
    let outbox = Outbox()

    func start(_ table: PendingCalls, timeout: Duration? = nil) -> Task<JSONDocument, any Error> {
        let send = outbox.send
        return Task { try await table.call(addOne, timeout: timeout, send: send) }
    }

    @Test("a result reply returns its value to the caller and frees the call's place; the timer then finds nothing due")
    func resultReturnsValue() async throws {
        let table = PendingCalls(timers: timers)
        let task = start(table)
        let call = try await outbox.call(0)
        #expect(call.service == "counter" && call.method == "add" && call.args == ["_0": 1])
        #expect(timers.armed == [PendingCalls.defaultTimeout])
        #expect(table.receive(.result(RemoteResult(id: call.id, value: 3))))
        #expect(try await outcome(task).get() == 3)
        #expect(table.count == 0)
        try expectTimerFindsNothingDue()
    }

    /// Fires the table's timer (at most one is armed) and checks it ended nothing and was not armed again.
    func expectTimerFindsNothingDue(sent: Int = 1) throws {
        #expect(timers.armed.count <= 1, "a table keeps one timer")
        timers.fireAll()
        #expect(timers.armed.isEmpty, "no call waits: the timer is not armed again")
        #expect(outbox.messages.count == sent, "no cancel is sent")
    }

    @Test("calls share one timer, armed for the earliest deadline; it ends only the calls due and is armed for the next")
    func oneTimerForTheEarliestDeadline() async throws {
        let table = PendingCalls(timers: timers)
        let slow = [start(table), start(table)]
        _ = try await outbox.call(0)
        _ = try await outbox.call(1)
        #expect(timers.armed == [PendingCalls.defaultTimeout], "one timer for two calls")
        let fast = start(table, timeout: .milliseconds(250))
        let fastCall = try await outbox.call(2)
        #expect(timers.armed == [.milliseconds(250)], "an earlier deadline moves the timer, the later one is cancelled")
        #expect(timers.fireAll() == 1)
        #expect(try await failure(fast)?.code == .timeout)
        #expect(try await outbox.message(3) == .cancel(id: fastCall.id))
        #expect(table.count == 2, "the calls not yet due still wait")
        let next = try #require(timers.armed.first)
        #expect(timers.armed.count == 1)
        #expect(next > PendingCalls.defaultTimeout - .seconds(5) && next <= PendingCalls.defaultTimeout,
                "armed again for the slow calls' deadline")
        table.close()
        for task in slow { #expect(try await failure(task)?.code == .withdrawn) }
        #expect(timers.armed.isEmpty, "closing cancels the timer")
    }

    @Test("an error reply fails the caller with the reply's code and message")
    func errorReplyFails() async throws {
        let table = PendingCalls(timers: timers)
        let task = start(table)
        let call = try await outbox.call(0)
        #expect(table.receive(.error(RemoteError(id: call.id, code: "failed", message: "counter is read-only"))))
        let error = try await failure(task)
        #expect(error == RemoteCallError(RemoteCallError.Code(rawValue: "failed"), "counter is read-only"))
    }

    @Test("answers for unknown ids are consumed and ignored; other messages are not consumed")
    func unknownIdIgnored() async throws {
        let table = PendingCalls(timers: timers)
        let task = start(table)
        let call = try await outbox.call(0)
        #expect(table.receive(.result(RemoteResult(id: call.id + 1000, value: 1))))
        #expect(table.receive(.error(RemoteError(id: -5, code: "withdrawn", message: "late"))))
        #expect(!table.receive(.error(RemoteError(id: nil, code: "unknownType", message: "x"))))
        #expect(!table.receive(.ping(id: call.id)))
        #expect(!table.receive(.cancel(id: call.id)))
        #expect(table.count == 1)
        table.receive(.result(RemoteResult(id: call.id, value: "right")))
        #expect(try await outcome(task).get() == "right")
        // A second answer to the same call comes too late and changes nothing.
        #expect(table.receive(.result(RemoteResult(id: call.id, value: "again"))))
    }

    @Test("closing fails every waiting call with withdrawn at once and refuses later calls")
    func closeFailsAllWithdrawn() async throws {
        let table = PendingCalls(timers: timers)
        let tasks = (0 ..< 3).map { _ in start(table) }
        var ids: Set<Int> = []
        for index in 0 ..< 3 { ids.insert(try await outbox.call(index).id) }
        #expect(ids.count == 3, "every call gets its own id")
        table.close(reason: "peer b is down")
        for task in tasks {
            let error = try await failure(task)
            #expect(error?.code == .withdrawn)
            #expect(error?.message.contains("peer b is down") == true)
        }
        #expect(table.count == 0)
        #expect(timers.armed.isEmpty)
        let late = start(table)
        #expect(try await failure(late)?.code == .withdrawn)
        #expect(outbox.messages.count == 3, "a call after the close is not sent")
    }

    @Test("a call with no answer in time fails with timeout and the peer is sent a cancel")
    func timeoutFails() async throws {
        let table = PendingCalls(timers: timers)
        let task = start(table, timeout: .milliseconds(250))
        let call = try await outbox.call(0)
        #expect(timers.armed == [.milliseconds(250)])
        #expect(timers.fireAll() == 1)
        let error = try await failure(task)
        #expect(error?.code == .timeout)
        #expect(try await outbox.message(1) == .cancel(id: call.id))
        #expect(table.count == 0)
        // The answer arriving afterwards is dropped.
        #expect(table.receive(.result(RemoteResult(id: call.id, value: 1))))
    }

    @Test("a timeout on a real event loop fails the call without any answer")
    func timeoutOnEventLoop() async throws {
        let loop = try EventLoop(name: "pending-calls-test")
        let table = PendingCalls(timers: loop)
        let task = start(table, timeout: .milliseconds(20))
        let error = try await failure(task)
        #expect(error?.code == .timeout)
        await loop.shutdown()
    }

    @Test("a timeout far beyond any clock's range is taken, waits on a real loop, and the answer still ends the call")
    func hugeTimeout() async throws {
        let loop = try EventLoop(name: "pending-calls-test")
        let table = PendingCalls(timers: loop)
        let task = start(table, timeout: .seconds(Int64.max))
        let call = try await outbox.call(0)
        #expect(table.receive(.result(RemoteResult(id: call.id, value: 7))))
        #expect(try await outcome(task).get() == 7)
        await loop.shutdown()
    }

    @Test("on a real event loop calls with earlier deadlines than the one waiting time out at their own")
    func earlierDeadlineOnEventLoop() async throws {
        let loop = try EventLoop(name: "pending-calls-test")
        let table = PendingCalls(timers: loop)
        let patient = start(table, timeout: .seconds(60))
        _ = try await outbox.call(0)
        let started = ContinuousClock.now
        let second = start(table, timeout: .milliseconds(400))
        _ = try await outbox.call(1)
        let first = start(table, timeout: .milliseconds(50))
        #expect(try await failure(first)?.code == .timeout)
        #expect(try await failure(second)?.code == .timeout)
        #expect(ContinuousClock.now - started < .seconds(5), "timed out at their own deadlines, not the patient call's")
        #expect(table.count == 1, "the call with a later deadline still waits")
        table.close()
        #expect(try await failure(patient)?.code == .withdrawn)
        await loop.shutdown()
    }

    @Test("cancel fails the caller with cancelled and sends a cancel; a second cancel finds nothing")
    func cancelSendsCancel() async throws {
        let table = PendingCalls(timers: timers)
        let task = start(table)
        let call = try await outbox.call(0)
        #expect(table.cancel(call.id))
        #expect(try await failure(task)?.code == .cancelled)
        #expect(try await outbox.message(1) == .cancel(id: call.id))
        #expect(!table.cancel(call.id))
        try expectTimerFindsNothingDue(sent: 2)
    }

    @Test("cancelling the calling task ends the call with CancellationError and sends a cancel")
    func taskCancellation() async throws {
        let table = PendingCalls(timers: timers)
        let task = start(table)
        let call = try await outbox.call(0)
        task.cancel()
        guard case .failure(let error) = try await outcome(task) else {
            Issue.record("the cancelled call returned a value")
            return
        }
        #expect(error is CancellationError)
        #expect(try await outbox.message(1) == .cancel(id: call.id))
        #expect(table.count == 0)
    }

    @Test("at the bound a new call fails with overloaded without being sent; an answer makes room")
    func overloadedAtBound() async throws {
        let table = PendingCalls(maxPending: 2, timers: timers)
        // Each call is awaited on the wire before the next starts: tasks started together may send in
        // either order, and the test answers the first by the id it was sent with.
        let first = start(table)
        let firstCall = try await outbox.call(0)
        let second = start(table)
        _ = try await outbox.call(1)
        let third = start(table)
        #expect(try await failure(third)?.code == .overloaded)
        #expect(outbox.messages.count == 2)
        table.receive(.result(RemoteResult(id: firstCall.id, value: 1)))
        _ = try await outcome(first)
        let fourth = start(table)
        let fourthCall = try await outbox.call(2)
        #expect(table.count == 2)
        table.close()
        _ = try await outcome(second)
        _ = try await outcome(fourth)
        #expect(fourthCall.id != firstCall.id, "ids are never reused")
    }

    @Test("a send that throws fails the call with that error and frees its place")
    func sendFailure() async throws {
        let table = PendingCalls(timers: timers)
        let refusing: @Sendable (WireMessage) throws -> Void = { _ in
            throw TransportError(.closed, "link closed")
        }
        let task = Task { try await table.call(addOne, send: refusing) }
        guard case .failure(let error) = try await outcome(task) else {
            Issue.record("a call that could not be sent returned a value")
            return
        }
        #expect((error as? TransportError)?.code == .closed)
        #expect(table.count == 0)
        try expectTimerFindsNothingDue(sent: 0)
    }

    @Test("whenEmpty runs once no call waits: at once when none does, else when the last one ends, once")
    func whenEmptyRunsOnceTheLastCallEnds() async throws {
        let table = PendingCalls(timers: timers)
        let runs = Mutex(0)
        table.whenEmpty { runs.withLock { $0 += 1 } }
        #expect(runs.withLock { $0 } == 1, "an empty table runs it at once")

        // One at a time, so ids[n] is the id the n-th task's call was sent with.
        var ids: [Int] = []
        let first = start(table)
        ids.append(try await outbox.call(0).id)
        let second = start(table)
        ids.append(try await outbox.call(1).id)
        let third = start(table)
        ids.append(try await outbox.call(2).id)
        table.whenEmpty { runs.withLock { $0 += 1 } }
        #expect(runs.withLock { $0 } == 1, "calls wait: not yet")
        table.receive(.result(RemoteResult(id: ids[0], value: 1)))
        _ = try await outcome(first)
        #expect(table.cancel(ids[1]))
        _ = try await outcome(second)
        #expect(runs.withLock { $0 } == 1, "one call still waits")
        // The timer was armed for the earliest deadline of the three: if that was not the third's,
        // firing it finds the third not yet due and arms it for the third's.
        for _ in 0 ..< 2 where table.count > 0 { #expect(timers.fireAll() == 1) }
        _ = try await outcome(third)
        #expect(runs.withLock { $0 } == 2, "the last call ended by its timeout")

        let fourth = start(table)
        let fourthID = try await outbox.call(5).id  // after two cancels (messages 3 and 4)
        table.receive(.result(RemoteResult(id: fourthID, value: 4)))
        _ = try await outcome(fourth)
        #expect(runs.withLock { $0 } == 2, "it runs once")

        let fifth = start(table)
        _ = try await outbox.call(6)
        table.whenEmpty { runs.withLock { $0 += 1 } }
        table.close(reason: "the link closed")
        _ = try await outcome(fifth)
        #expect(runs.withLock { $0 } == 3, "closing the table ends the last call too")
    }
}

@Suite("InboundCallLimit")
struct InboundCallLimitTests {
    func call(_ id: Int) -> RemoteCall {
        RemoteCall(id: id, service: "counter", realm: nil, method: "value", args: [:])
    }

    @Test("calls over the bound are answered with an overloaded error, not queued")
    func overLimitAnsweredOverloaded() {
        let limit = InboundCallLimit(maxInFlight: 2)
        #expect(limit.admit(call(1)) == nil)
        #expect(limit.admit(call(2)) == nil)
        guard case .error(let reply)? = limit.admit(call(3)) else {
            Issue.record("the third call was admitted")
            return
        }
        #expect(reply.id == 3 && reply.code == "overloaded")
        #expect(limit.count == 2)
        #expect(limit.finish(1))
        #expect(!limit.finish(1))
        #expect(limit.admit(call(3)) == nil)
        limit.reset()
        #expect(limit.count == 0)
    }

    @Test("a call whose id is already in flight is refused with duplicate-call")
    func duplicateRefused() {
        let limit = InboundCallLimit()
        #expect(limit.admit(call(7)) == nil)
        guard case .error(let reply)? = limit.admit(call(7)) else {
            Issue.record("the duplicate was admitted")
            return
        }
        #expect(reply.code == "duplicate-call")
        #expect(limit.count == 1)
    }
}
