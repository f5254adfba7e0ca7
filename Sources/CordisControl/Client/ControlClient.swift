import CordisJSON
import CordisWire
import FoundationEssentials

/// A console's link to one node's control API: sends requests and awaits their responses.
///
/// The console (`cordis-console`) and the integration tests use it. Thread-safe: an actor.
public actor ControlClient {
    private let link: Link
    private let loop: EventLoop
    private var nextID = 0
    private var waiting: [Int: CheckedContinuation<JSONValue, any Error>] = [:]
    private var pages: [Int: [JSONValue]] = [:]
    private var reader: Task<Void, Never>?
    private var closedError: (any Error)?
    /// The events pushed after a `subscribe` request with `follow: true`, in order; finishes when the
    /// link closes. Unbounded: a console drains it as it prints.
    public nonisolated let events: AsyncStream<ControlEvent>
    private nonisolated let eventSink: AsyncStream<ControlEvent>.Continuation

    /// Connects to the node at `address` as a console named `name`; with `tls`, a TCP link runs TLS
    /// and the console is named by the context's certificate (its operator name) instead of `name`.
    ///
    /// - Throws: `TransportError` or `WireError` when the node cannot be reached or refuses the link.
    public static func connect(
        to address: Address, name: String = "console", secrets: ClusterSecrets? = nil, tls: TLSContext? = nil,
        timeout: Duration = .seconds(10)
    ) async throws -> ControlClient {
        let loop = try EventLoop(name: "cordis-console")
        do {
            let named = tls?.ownNames.first(where: { $0.kind == .operator })?.name ?? name
            let identity = PeerIdentity(
                role: .console, name: named, incarnation: UUID().uuidString.lowercased())
            var limits = ConnectionLimits()
            limits.connectTimeout = timeout
            let link = try await Link.connect(
                to: address, on: loop, configuration: HandshakeConfiguration(identity: identity, secrets: secrets, tls: tls),
                limits: limits, options: LinkOptions(handshakeTimeout: timeout))
            let client = ControlClient(link: link, loop: loop)
            await client.startReading()
            return client
        } catch {
            await loop.shutdown()
            throw error
        }
    }

    private init(link: Link, loop: EventLoop) {
        self.link = link
        self.loop = loop
        (events, eventSink) = AsyncStream.makeStream(of: ControlEvent.self, bufferingPolicy: .unbounded)
    }

    private func startReading() {
        let link = self.link
        reader = Task { [weak self] in
            do {
                for try await message in link.messages {
                    if case .event(let event) = message {
                        self?.eventSink.yield(event)
                        continue
                    }
                    guard case .response(let response) = message else { continue }
                    await self?.deliver(response)
                }
                await self?.fail(ControlClientError(.closed, "the node closed the link"))
            } catch {
                await self?.fail(error)
            }
        }
    }

    private func deliver(_ response: ControlResponse) {
        // An answer nobody waits for any more (it came after its timeout) is dropped, pages too.
        guard waiting[response.id] != nil else { return }
        if let code = response.errorCode {
            waiting.removeValue(forKey: response.id)?.resume(
                throwing: ControlFailure(code: code, message: response.errorMessage ?? code))
            return
        }
        guard let result = response.result else { return }
        if response.more {
            pages[response.id, default: []].append(result)
            return
        }
        let earlier = pages.removeValue(forKey: response.id) ?? []
        let value: JSONValue = earlier.isEmpty ? result : .array(earlier + [result])
        waiting.removeValue(forKey: response.id)?.resume(returning: value)
    }

    private func fail(_ error: any Error) {
        closedError = error
        eventSink.finish()
        let pending = waiting
        waiting.removeAll()
        for continuation in pending.values { continuation.resume(throwing: error) }
    }

    /// Why the link ended (the node closed it, or the link's error), nil while it is open.
    public var closeReason: String? {
        guard let closedError else { return nil }
        if let error = closedError as? ControlClientError { return error.message }
        return "\(closedError)"
    }

    /// How many requests may wait for their answers at once.
    public static let maximumWaiting = 256

    /// Sends a command and returns its result.
    ///
    /// - Throws: `ControlFailure` with the node's error code and message; `ControlClientError`
    ///   `.timeout` when no answer comes within `timeout`, `.busy` past `maximumWaiting` requests;
    ///   the link's error when it closes.
    public func request(
        _ command: ControlCommand, node: String? = nil, args: JSONObject = JSONObject(), timeout: Duration = .seconds(10)
    ) async throws -> JSONValue {
        try await request(named: command.rawValue, node: node, args: args, timeout: timeout)
    }

    /// Sends a command by its wire name, which may be one this side does not know (for tests of the
    /// node's refusals).
    package func request(
        named command: String, node: String? = nil, args: JSONObject = JSONObject(), timeout: Duration = .seconds(10)
    ) async throws -> JSONValue {
        try await request(named: command, node: node, args: args, timeout: timeout, announcing: ControlTimeout.seconds(timeout))
    }

    /// Sends a command that tells the node `announced` as its timeout (any number, for tests of the
    /// node's range checks) and waits for the answer at most `timeout`.
    package func request(
        named command: String, node: String? = nil, args: JSONObject = JSONObject(), timeout: Duration,
        announcing announced: Double?
    ) async throws -> JSONValue {
        if let closedError { throw closedError }
        guard waiting.count < Self.maximumWaiting else {
            throw ControlClientError(.busy, "\(waiting.count) requests are already waiting for the node")
        }
        nextID += 1
        let id = nextID
        let timer = loop.schedule(after: timeout) { [weak self] in
            Task { await self?.expire(id, command, after: timeout) }
        }
        defer { loop.cancelTimer(timer) }
        return try await withCheckedThrowingContinuation { continuation in
            waiting[id] = continuation
            do {
                try link.enqueue(.request(ControlRequest(
                    id: id, command: command, node: node, args: args, timeout: announced)))
            } catch {
                waiting.removeValue(forKey: id)?.resume(throwing: error)
            }
        }
    }

    private func expire(_ id: Int, _ command: String, after timeout: Duration) {
        pages[id] = nil
        waiting.removeValue(forKey: id)?.resume(
            throwing: ControlClientError(.timeout, "no answer to \(command) (request \(id)) from the node within \(timeout)"))
    }

    /// Closes the link.
    public func close() async {
        link.close(reason: "console done")
        reader?.cancel()
        await loop.shutdown()
    }
}
