/// The messages a `Link` receives after its handshake, in order: an `AsyncSequence` with one consumer
/// at a time.
///
/// Heartbeats (`ping`) and messages of unknown type are answered on the loop thread and never appear
/// here. Its buffer is the connection's bounded inbound queue, holding each message once, decoded: a consumer that stops iterating makes
/// the link stop reading, never drop. It ends (nil) after an orderly close and throws the reason
/// otherwise (a `TransportError`).
public struct LinkMessages: AsyncSequence, Sendable {
    /// A message.
    public typealias Element = WireMessage
    /// Ends with a `TransportError` (or `CancellationError` when the waiting task is cancelled).
    public typealias Failure = any Error

    let link: Link

    /// The iterator; `next()` suspends until a message arrives or the link ends.
    public struct AsyncIterator: AsyncIteratorProtocol {
        let link: Link

        /// The next message, or nil after an orderly close.
        public mutating func next() async throws -> WireMessage? {
            try await link.nextMessage()
        }

        /// The next message, waited for on the caller's actor: a reader on an actor is resumed there
        /// directly, with no hop to the default pool and back.
        public mutating func next(isolation actor: isolated (any Actor)?) async throws(any Error) -> WireMessage? {
            try await link.nextMessage()
        }
    }

    /// An iterator over the link's messages.
    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(link: link)
    }
}
