/// The inbound frame payloads of a `Connection`, in arrival order: an `AsyncSequence` with one
/// consumer at a time.
///
/// Its buffer is the connection's bounded inbound queue: a consumer that stops iterating stops the
/// connection reading its socket, so the peer is slowed down and nothing is dropped. It ends (nil)
/// after an orderly close and throws the `TransportError` that closed the connection otherwise.
package struct InboundFrames: AsyncSequence, Sendable {
    /// A payload.
    package typealias Element = [UInt8]
    /// Ends with a `TransportError` (or `CancellationError` when the waiting task is cancelled).
    package typealias Failure = any Error

    let connection: Connection

    /// The iterator; `next()` suspends until a frame arrives or the connection ends.
    package struct AsyncIterator: AsyncIteratorProtocol {
        let connection: Connection

        /// The next payload, or nil after an orderly close.
        package mutating func next() async throws -> [UInt8]? {
            try await connection.nextFrame()
        }

        /// The next payload, waited for on the caller's actor (no hop to the default pool and back).
        package mutating func next(isolation actor: isolated (any Actor)?) async throws(any Error) -> [UInt8]? {
            try await connection.nextFrame()
        }
    }

    /// An iterator over the connection's frames.
    package func makeAsyncIterator() -> AsyncIterator { AsyncIterator(connection: connection) }
}
