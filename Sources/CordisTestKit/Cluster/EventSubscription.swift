import CordisControl
import Cordis
import CordisWire

/// A node's events as they happen, from the moment the subscription started (`ClusterNode.events()`).
/// One reader at a time. Thread-safe (an actor).
public actor EventSubscription {
    private let client: ControlClient
    private let node: String
    private let defaultDeadline: Duration
    private let failure: @Sendable (TestKitError.Code, String) -> TestKitError
    private var seen: [EventRecord] = []
    private var buffer: [ControlEvent] = []
    private var finished = false
    private var waiter: CheckedContinuation<Void, Never>?
    private var pump: Task<Void, Never>?

    init(
        client: ControlClient, node: String, defaultDeadline: Duration,
        failure: @escaping @Sendable (TestKitError.Code, String) -> TestKitError
    ) {
        self.client = client
        self.node = node
        self.defaultDeadline = defaultDeadline
        self.failure = failure
    }

    /// Starts reading the link's events into the buffer.
    func start() {
        let events = client.events
        pump = Task { [weak self] in
            for await event in events { await self?.deliver(event) }
            await self?.finish()
        }
    }

    private func deliver(_ event: ControlEvent) {
        buffer.append(event)
        wake()
    }

    private func finish() {
        finished = true
        wake()
    }

    private func wake() {
        waiter?.resume()
        waiter = nil
    }

    /// Every event read so far by `next`, in order.
    public var received: [EventRecord] { seen }

    /// Waits for the next event that satisfies `matching` (events before it are read and kept in
    /// `received`) and returns it.
    ///
    /// - Throws: `TestKitError` `.timeout` (with the events seen and the logs) past `deadline`;
    ///   `.notRunning` when the node's link closed.
    public func next(within deadline: Duration? = nil, matching: @Sendable (EventRecord) -> Bool) async throws -> EventRecord {
        let limit = deadline ?? defaultDeadline
        let end = ContinuousClock.now + limit
        while true {
            if !buffer.isEmpty {
                let record = EventRecord(buffer.removeFirst())
                seen.append(record)
                if matching(record) { return record }
                continue
            }
            if finished || ContinuousClock.now >= end { break }
            let timer = Task { [weak self] in
                try? await Task.sleep(until: end)
                await self?.wake()
            }
            await withCheckedContinuation { waiter = $0 }
            timer.cancel()
        }
        let closed = await client.closeReason
        throw failure(
            finished ? .notRunning : .timeout,
            "\(node): no matching event within \(limit)\(closed.map { " (link closed: \($0))" } ?? ""); events seen: \(seen.map { "\($0.kind) \($0.detail)" })")
    }

    /// Waits for the next status event of entry `entry` reaching `state` (see `next(within:matching:)`).
    public func next(entry: String, _ state: FiberState, within deadline: Duration? = nil) async throws -> EventRecord {
        try await next(within: deadline) { record in
            record.kind == "status" && record.detail["entry"]?.stringValue == entry && record.detail["to"]?.stringValue == state.rawValue
        }
    }

    /// Ends the subscription and its link.
    public func close() async {
        await client.close()
        pump?.cancel()
    }
}
