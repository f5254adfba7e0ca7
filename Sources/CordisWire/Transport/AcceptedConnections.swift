/// The connections a `Listener` admitted, in accept order: an `AsyncSequence` with one consumer at a
/// time that ends when the listener closes.
///
/// It hands out only connections that are still open: one that closed while waiting (a peer that
/// connected and went away) is dropped by the listener on the loop thread and never reaches the
/// consumer. Its buffer is bounded by the listener's `maxPendingHandshakes`.
public struct AcceptedConnections: AsyncSequence, Sendable {
    /// An admitted connection.
    public typealias Element = Connection
    /// The sequence never throws; it ends (nil) when the listener closes or the waiting task is
    /// cancelled.
    public typealias Failure = Never

    let listener: Listener

    /// The iterator; `next()` suspends until a connection is admitted or the listener closes.
    public struct AsyncIterator: AsyncIteratorProtocol {
        let listener: Listener

        /// The next open admitted connection, or nil once the listener is closed.
        public mutating func next() async -> Connection? {
            await listener.nextConnection()
        }

        /// The next open admitted connection, or nil once the listener is closed.
        public mutating func next(isolation actor: isolated (any Actor)?) async -> Connection? {
            await listener.nextConnection()
        }
    }

    /// An iterator over the admitted connections.
    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(listener: listener) }
}
