import Synchronization

/// An authenticated message link: a `Connection`, its `Handshake`, the per-frame MAC of an
/// authenticated session, and the message codec.
///
/// Create one with `Link.connect(to:on:configuration:options:)` (initiator) or
/// `Link.establish(_:side:configuration:options:)` (responder, for an accepted connection); both
/// return once the handshake is complete. The handshake, frame verification, heartbeat answers
/// (`ping` → `pong`) and replies to unknown message types all run on the event-loop thread, so a
/// consumer busy elsewhere does not make the peer think this side is dead. Before the handshake
/// completes anything but the next expected message closes the link; after it an unknown message
/// type gets an `error` reply and the link stays up, while malformed JSON, a bad MAC or a replayed
/// frame closes it.
public final class Link: Sendable {
    /// The receiving half, under one lock: the handshake's course and every frame's opening and decoding
    /// (`LinkCodec`, which holds whether the link is established), and who is told the handshake's outcome
    /// once (a handshake cannot establish after its deadline or its connection's close decided it).
    private struct Receiving {
        var codec: LinkCodec
        var lastHeard = ContinuousClock.now
        /// Where answers go on the loop thread (see `deliverAnswers(to:)`).
        var answers: PendingCalls?
        /// Told the outcome once (`startHandshake`'s completion, which `establish` awaits); taken when the
        /// outcome is decided.
        var completion: (@Sendable (Result<HandshakeResult, any Error>) -> Void)?
    }

    /// The connection underneath (addresses, peer credentials, close reason).
    public let connection: Connection
    /// Which end of the handshake this side was.
    public let side: Handshake.Side
    /// The options this link applies.
    public let options: LinkOptions
    private let receiving: Mutex<Receiving>
    /// The sending half (`LinkSeal`): every message sent is sealed and put in line under this lock, so
    /// sequence numbers follow the byte stream; written after it (the socket write never runs under a
    /// lock). Its session comes from the receiving half when the handshake established the link.
    private let sealing = Mutex(LinkSeal())

    private init(connection: Connection, handshake: Handshake, options: LinkOptions) {
        self.connection = connection
        self.side = handshake.side
        self.options = options
        self.receiving = Mutex(Receiving(
            codec: LinkCodec(handshake: handshake, maxFrameSize: options.maxFrameSize, deliversPongs: options.deliversPongs)))
    }

    // MARK: Creating

    /// Dials `address` and runs the handshake as the initiator.
    ///
    /// - Throws: `TransportError` when dialling fails or the link closes during the handshake
    ///   (`handshakeTimeout`, `connectionReset`…), `WireError` when the handshake is refused
    ///   (`.rejected` with the peer's reason, `.badMAC`, `.authenticationRequired`, `.versionMismatch`…).
    public static func connect(
        to address: Address, on loop: EventLoop, configuration: HandshakeConfiguration,
        limits: ConnectionLimits = ConnectionLimits(), options: LinkOptions = LinkOptions()
    ) async throws -> Link {
        // The handshake starts where the dial completes (on the loop thread when the connect had to
        // wait), so the first message leaves at once, however long this task waits for a thread: a
        // listener under a flood sheds the connections that have not spoken first.
        try await withCheckedThrowingContinuation { continuation in
            loop.dial(to: address, limits: limits, tls: address.isUnix ? nil : configuration.tls) { dialled in
                switch dialled {
                case .success(let connection):
                    startHandshake(connection, side: .initiator, configuration: configuration, options: options) {
                        continuation.resume(with: $0)
                    }
                case .failure(let error):
                    continuation.resume(throwing: error)
                }
            }
        }
    }

    /// Runs the handshake on `connection` (a dialled one as `.initiator`, an accepted one as
    /// `.responder`) and returns the link once it is up. Call it before consuming any frame of the
    /// connection. A connection that runs TLS (dialled with a TLS context, or accepted by a TLS
    /// listener) runs the `tls` scheme, its peer named by its certificate. Same errors as `connect`;
    /// on failure the connection is closed.
    public static func establish(
        _ connection: Connection, side: Handshake.Side, configuration: HandshakeConfiguration,
        options: LinkOptions = LinkOptions()
    ) async throws -> Link {
        try await withCheckedThrowingContinuation { continuation in
            startHandshake(connection, side: side, configuration: configuration, options: options) { continuation.resume(with: $0) }
        }
    }

    /// Starts the handshake on the accepted or dialled `connection` and returns at once; `completion`
    /// is called once, with the link when it is up, or with the error (`establish`'s). On an error the
    /// link closes the connection itself, after the refusal it owes the peer (which may go after the
    /// callback): the completion must not close it. It is called on the event loop's thread, or on the
    /// caller's when the handshake cannot start. Nothing waits meanwhile, so an accept loop can start the
    /// handshakes of many connections without a task for each: one the listener sheds costs no more than
    /// its socket.
    public static func startHandshake(
        _ connection: Connection, side: Handshake.Side, configuration: HandshakeConfiguration,
        options: LinkOptions = LinkOptions(), completion: @escaping @Sendable (Result<Link, any Error>) -> Void
    ) {
        var handshake: Handshake
        do {
            handshake = try Handshake(side: side, configuration: configuration, overTLS: connection.tls != nil)
        } catch {
            connection.close()
            return completion(.failure(error))
        }
        let opening = handshake.start()
        let link = Link(connection: connection, handshake: handshake, options: options)
        link.receiving.withLock { state in
            state.completion = { outcome in completion(outcome.map { _ in link }) }
        }
        link.beginHandshake(opening: opening)
    }

    /// Arms the handshake's deadline (the connection's: past it, the connection closes and the handshake
    /// fails with `handshakeTimeout`) and hands the connection's frames to the handshake; what follows
    /// runs on the loop thread, where the outcome is decided once (`decide`) and told.
    private func beginHandshake(opening: [WireMessage]) {
        connection.setMaxFrameSize(min(Handshake.maxFrameSize, options.maxFrameSize))
        connection.armHandshakeDeadline(after: options.handshakeTimeout)
        connection.whenClosed { [self] reason in
            let error = reason ?? TransportError(.closed, "connection \(connection.id) closed during the handshake")
            abandonHandshake(error)
        }
        connection.setFilter { [self] payload in filter(payload) }
        for message in opening {
            do {
                try connection.enqueue(message.encoded)
            } catch {
                if abandonHandshake(error) { connection.close(reason: error) }
            }
        }
    }

    /// Who is told a handshake's outcome, taken once the outcome is decided (nil: nobody waits).
    private typealias Told = (@Sendable (Result<HandshakeResult, any Error>) -> Void)?

    /// Takes who is told the outcome the link codec just decided, under the receiving lock.
    private static func takeCompletion(in state: inout Receiving) -> Told {
        defer { state.completion = nil }
        return state.completion
    }

    /// Tells the outcome, outside any lock (the connection's deadline ends with its `markEstablished()`
    /// or its close).
    private func tell(_ told: Told, _ outcome: Result<HandshakeResult, any Error>) {
        told?(outcome)
    }

    /// Gives up the handshake with `error` and tells it, once; false when the outcome was already known.
    @discardableResult
    private func abandonHandshake(_ error: any Error) -> Bool {
        let (decided, told) = receiving.withLock { state -> (Bool, Told) in
            guard state.codec.abandonHandshake() else { return (false, nil) }
            return (true, Self.takeCompletion(in: &state))
        }
        if decided { tell(told, .failure(error)) }
        return decided
    }

    // MARK: Public surface

    /// The handshake's outcome: the peer's identity (name, role, incarnation, addresses,
    /// capabilities), the protocol version, whether frames are authenticated.
    public var handshake: HandshakeResult {
        // Known before `establish` returns the link, so never the placeholder for a caller.
        receiving.withLock { $0.codec.result } ?? HandshakeResult.placeholder
    }

    /// The peer's identity as established by the handshake.
    public var peer: PeerIdentity { handshake.peer }

    /// The largest frame this side sends on the link: its own limit, or the peer's when that is smaller
    /// (protocol 1.4's `max-frame:N` capability); the own limit before the handshake is over.
    public var sendLimit: Int {
        sealing.withLock { $0.session?.encoder.maxFrameSize } ?? options.maxFrameSize
    }

    /// The peer's user id on a Unix socket (from `SO_PEERCRED`), nil on TCP.
    public var peerUID: UInt32? { connection.credentials?.uid }

    /// When the last frame from the peer arrived (any frame, heartbeats included).
    public var lastHeard: ContinuousClock.Instant { receiving.withLock { $0.lastHeard } }

    /// From now on hands every answer received (a `result`, an `error` with an id) to `calls` on the
    /// loop thread, as it is decoded, instead of queueing it for `messages`: the caller waiting for it
    /// is resumed without a hop through the link's reader. Other messages are queued as before, so an
    /// answer may reach its caller before a message the peer sent ahead of it is read.
    package func deliverAnswers(to calls: PendingCalls) {
        receiving.withLock { $0.answers = calls }
    }

    /// The messages received, in order (see `LinkMessages`).
    public var messages: LinkMessages { LinkMessages(link: self) }

    /// Sends `message` (sealed with the sequence number and MAC on an authenticated link).
    ///
    /// - Throws: `TransportError`: `closed` (or the reason the link is closing), `outboundBufferFull` or `tls`
    ///   (the link is then closed),
    ///   `tooLarge` when the message is over the frame limit: only this message fails, nothing is sent
    ///   and the link stays up. (An oversized frame *received* closes the link instead: its length
    ///   prefix is all that was read, so the stream cannot be resynchronised.)
    public func send(_ message: WireMessage) async throws {
        try enqueue(message)
    }

    /// Sends `message` without suspending (callable on the loop thread). Same errors as `send`.
    public func enqueue(_ message: WireMessage) throws(TransportError) {
        let claim = try sealing.withLock { (seal: inout LinkSeal) throws(TransportError) -> Connection.WriteClaim? in
            try connection.stage(try sealed(seal.seal(message, limit: connection.limits.outboundBufferBytes)))
        }
        options.traffic?.sent(message)
        if let claim { connection.write(claim) }
    }

    /// Sends `event` once for each subscription in `ids` (its copies differ only in their id), as one
    /// write. Same errors as `send`; on `tooLarge` none of them is sent.
    package func enqueue(_ event: SharedEvent, ids: [Int]) throws(TransportError) {
        guard !ids.isEmpty else { return }
        let claim = try sealing.withLock { (seal: inout LinkSeal) throws(TransportError) -> Connection.WriteClaim? in
            try connection.stage(try sealed(seal.seal(event, ids: ids, limit: connection.limits.outboundBufferBytes)))
        }
        options.traffic?.count(TrafficCounter.Kind(.event(event.event)), sent: ids.count)
        if let claim { connection.write(claim) }
    }

    /// What the seal made, or the error a send without a session throws (before the handshake
    /// established the link, or after its `goodbye`).
    private func sealed(_ framed: [UInt8]?) throws(TransportError) -> [UInt8] {
        guard let framed else {
            throw connection.closeError ?? TransportError(.closed, "link on connection \(connection.id) is closed")
        }
        return framed
    }

    /// How many bytes wait to be written to the peer (accepted but not yet taken by the socket): what a
    /// peer that does not read leaves this side holding.
    public var backlog: Int { connection.bufferedOutboundBytes }

    /// Closes the link in order: sends `goodbye` with `reason`, flushes, closes. Idempotent.
    public func close(reason: String? = nil) {
        // The last message sealed: anything sent after it is refused.
        let claim = sealing.withLock { seal -> Connection.WriteClaim? in
            guard let framed = try? seal.seal(.goodbye(reason: reason), last: true, limit: connection.limits.outboundBufferBytes) else {
                return nil
            }
            return (try? connection.stage(framed)) ?? nil
        }
        if let claim {
            options.traffic?.count(.membership, sent: 1)
            connection.write(claim)
        }
        connection.close()
    }

    /// Waits until the link is closed; returns why (nil for an orderly close).
    public func closed() async -> TransportError? {
        await connection.closed()
    }

    /// The next message from the connection's queue; nil at the end.
    nonisolated(nonsending) func nextMessage() async throws -> WireMessage? {
        try message(from: try await connection.nextItem())
    }

    /// The next message, for a reader that ends with the link rather than by cancellation: a wait under
    /// way is not interrupted by cancelling the task (one that is cancelled before it waits throws
    /// `CancellationError`). It saves the reader a hop off its actor and back per message, which
    /// `messages` (cancellable at any time) costs.
    package nonisolated(nonsending) func nextMessageUninterruptibly() async throws -> WireMessage? {
        try message(from: try await connection.nextItemUninterruptibly())
    }

    private func message(from item: InboundItem?) throws -> WireMessage? {
        switch item {
        case .message(let message)?: return message
        case nil: return nil
        case .frame?:
            // Every frame after the handshake passes the link's filter, which queues messages only.
            throw TransportError(.protocolViolation, "link on connection \(connection.id) received an undecoded frame")
        }
    }

    // MARK: Loop thread

    /// What to do after a frame was examined under the receiving lock (the rare outcomes boxed, so a
    /// message, the common one, moves cheaply).
    private enum Action {
        /// Hand this message to the consumer.
        case deliver(WireMessage)
        /// Hand this answer to the calls waiting on the loop thread.
        case offer(WireMessage, to: PendingCalls)
        /// Anything else the link codec said.
        case output(LinkCodec.Output)
        /// The handshake's outcome, and who to tell it.
        indirect case established([WireMessage], HandshakeResult, SessionCodec, Told)
        indirect case failed([WireMessage], WireError, Told)
    }

    /// Runs on the loop thread for every inbound frame: the link codec drives the handshake, then opens
    /// and decodes frames; this carries out what it says (answering pings and unknown types itself).
    private func filter(_ payload: [UInt8]) -> FrameVerdict {
        let action = receiving.withLock { state -> Action in
            state.lastHeard = ContinuousClock.now
            // Frames come out of a TLS session only once its handshake is over: the peer's certificate
            // is verified and named by then.
            let output = state.codec.receive(payload, certificate: connection.tls?.peerName)
            switch consume output {
            case .decoded(let message, .deliver):
                switch message {
                case .result, .error:
                    guard let answers = state.answers else { return .deliver(message) }
                    return .offer(message, to: answers)
                default:
                    return .deliver(message)
                }
            case .established(let send, let result, let codec):
                // Decided here, with the phase: a deadline or a close that comes after finds it known.
                return .established(send, result, codec, Self.takeCompletion(in: &state))
            case .failed(let send, let error):
                return .failed(send, error, Self.takeCompletion(in: &state))
            case let other:
                return .output(other)
            }
        }
        switch consume action {
        case .deliver(let message):
            options.traffic?.received(message)
            return .decoded(message)
        case .offer(let message, let calls):
            options.traffic?.received(message)
            // Resumes the caller outside the lock; an `error` without an id answers no call.
            return calls.receive(message) ? .consume : .decoded(message)
        case .output(.decoded(let message, let reaction)):
            options.traffic?.received(message)
            if case .answer(let answer) = reaction { try? enqueue(answer) }
            return reaction == .deliver ? .decoded(message) : .consume
        case .output(.proceed(let send)):
            sendPlain(send)
            return .consume
        case .output(.refuse(let error, let notice)):
            if let notice { try? enqueue(notice) }
            return .close(TransportError(.protocolViolation, "connection \(connection.id): \(error)"))
        case .output(.consume), .output(.established), .output(.failed):
            return .consume
        case .established(let send, let result, let codec, let told):
            sendPlain(send)
            sealing.withLock { $0.establish(codec) }
            connection.setMaxFrameSize(options.maxFrameSize)
            connection.markEstablished(peerVersion: result.version)
            tell(told, .success(result))
            return .consume
        case .failed(let send, let error, let told):
            tell(told, .failure(error))
            let reason = TransportError(.protocolViolation, "handshake failed: \(error)")
            guard side == .responder, options.failureDelay > .zero else {
                sendPlain(send)
                return .close(reason)
            }
            // A refused peer is answered no sooner than the failure delay, whatever failed, so its
            // probes are slow and timing tells it nothing. The connection stays bounded meanwhile.
            connection.loop.schedule(after: options.failureDelay) { [connection] in
                for message in send { try? connection.enqueue(message.encoded) }
                connection.close(reason: reason)
            }
            return .consume
        }
    }

    /// Sends handshake messages, which travel unsealed.
    private func sendPlain(_ messages: [WireMessage]) {
        for message in messages { try? connection.enqueue(message.encoded) }
    }
}

extension HandshakeResult {
    /// Stands in before the handshake completed (never visible through a returned `Link`).
    static let placeholder = HandshakeResult(
        peer: PeerIdentity(role: .node, name: "-", incarnation: "-"), version: .current, keys: nil)
}
