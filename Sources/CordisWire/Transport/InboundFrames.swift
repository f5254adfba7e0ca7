/// The inbound frame payloads of a `Connection`, in arrival order: an `AsyncSequence` with one
/// consumer at a time.
///
/// Its buffer is the connection's bounded inbound queue: a consumer that stops iterating stops the
/// connection reading its socket, so the peer is slowed down and nothing is dropped. It ends (nil)
/// after an orderly close and throws the `TransportError` that closed the connection otherwise.
public struct InboundFrames: AsyncSequence, Sendable {
    /// A payload.
    public typealias Element = [UInt8]
    /// Ends with a `TransportError` (or `CancellationError` when the waiting task is cancelled).
    public typealias Failure = any Error

    let connection: Connection

    /// The iterator; `next()` suspends until a frame arrives or the connection ends.
    public struct AsyncIterator: AsyncIteratorProtocol {
        let connection: Connection

        /// The next payload, or nil after an orderly close.
        public mutating func next() async throws -> [UInt8]? {
            try await connection.nextFrame()
        }

        /// The next payload, waited for on the caller's actor (no hop to the default pool and back).
        public mutating func next(isolation actor: isolated (any Actor)?) async throws(any Error) -> [UInt8]? {
            try await connection.nextFrame()
        }
    }

    /// An iterator over the connection's frames.
    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(connection: connection) }
}
