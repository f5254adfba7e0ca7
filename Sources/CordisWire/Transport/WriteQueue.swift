/// The bytes a connection has to write, in order, and who writes them.
///
/// Any thread may send. The first sender to find no writer at work claims the bytes and writes them
/// itself, outside the connection's lock; whatever is staged meanwhile waits here, in order, and the
/// writer takes it when it is done, or the loop does once a full socket drains. A value with no lock,
/// no socket and no clock: the connection keeps one under its lock and carries out what it answers
/// (a write, a wait for the socket, a close). Tested without a socket (`WriteQueueTests`).
struct WriteQueue {
    /// Bytes waiting, in order, behind those a writer holds.
    private(set) var waiting: [UInt8] = []
    /// True while a writer (a sender's thread, or the loop) holds bytes outside the lock.
    private(set) var isWriting = false
    /// How many bytes the writer holds (they come before `waiting`).
    private(set) var held = 0
    /// True when the socket was full: the loop writes `waiting` once it reports the socket writable.
    private(set) var awaitsWritable = false
    /// True when the socket must close once the writer in progress is done.
    private(set) var closesAfterWrite = false
    /// The `send(2)` calls made so far (for tests of write batching).
    private(set) var sendCalls = 0

    /// The bytes not yet taken by the socket: held by the writer, and waiting.
    var pending: Int { held + waiting.count }

    /// What `stage` made of the bytes.
    enum Staged: Equatable {
        /// No writer was at work: the caller now is, and writes these bytes (outside the lock).
        case claimed([UInt8])
        /// They wait behind the writer's.
        case queued
        /// They would make more than `limit` bytes wait: nothing was staged.
        case overLimit(pending: Int)
    }

    /// Puts `bytes` in line. With a `limit`, bytes that would leave more than `limit` waiting behind a
    /// writer (a peer that does not read) are refused; nil stages them whatever waits (a last word).
    mutating func stage(_ bytes: [UInt8], limit: Int?) -> Staged {
        guard isWriting || awaitsWritable else {
            isWriting = true
            held = bytes.count
            return .claimed(bytes)
        }
        if let limit, pending + bytes.count > limit { return .overLimit(pending: pending + bytes.count) }
        waiting.append(contentsOf: bytes)
        return .queued
    }

    /// The writer puts its claimed bytes back, first in line, for the loop to write at the end of its
    /// turn with whatever is staged behind them; it stays the writer (`takeDeferred`).
    mutating func deferClaim(_ bytes: [UInt8]) {
        if waiting.isEmpty {
            waiting = bytes
        } else {
            waiting.insert(contentsOf: bytes, at: 0)
        }
        held = 0
    }

    /// At the end of the loop's turn: everything waiting, for the writer that deferred its claim; nil
    /// when no writer is at work. `dropping` (the connection is aborting) hands over nothing, so the
    /// write still ends the usual way.
    mutating func takeDeferred(dropping: Bool) -> [UInt8]? {
        guard isWriting else { return nil }
        var bytes: [UInt8] = []
        swap(&bytes, &waiting)
        if dropping { bytes = [] }
        held = bytes.count
        return bytes
    }

    /// What the writer does after a round of `send(2)` calls.
    enum AfterWrite: Equatable {
        /// Write these bytes, staged meanwhile, next.
        case more([UInt8])
        /// The socket is full: the rest waits for the loop; the writer is done.
        case awaitWritable
        /// The writer is done; `closeSocket` when a close waited for it.
        case done(closeSocket: Bool)
    }

    /// The writer wrote `bytes` up to `written` in `calls` calls of `send(2)`; `failed` when the socket
    /// failed, `aborting` when the connection drops what it buffered.
    mutating func wrote(_ bytes: [UInt8], upTo written: Int, calls: Int, failed: Bool, aborting: Bool) -> AfterWrite {
        sendCalls += calls
        if !failed, !aborting, written < bytes.count {
            waiting.insert(contentsOf: bytes[written...], at: 0)
            held = 0
            isWriting = false
            awaitsWritable = true
            return .awaitWritable
        }
        if !failed, !aborting, !waiting.isEmpty {
            var more: [UInt8] = []
            swap(&more, &waiting)
            held = more.count
            return .more(more)
        }
        isWriting = false
        held = 0
        let close = closesAfterWrite
        closesAfterWrite = false
        return .done(closeSocket: close)
    }

    /// What the loop does when the socket reports writable.
    enum Writable: Equatable {
        /// A writer is at work: it takes what waits.
        case busy
        /// The loop is now the writer: write these bytes.
        case write([UInt8])
        /// Nothing waits.
        case idle
    }

    /// The socket can take bytes again: the loop becomes the writer of what waits, unless one is at work.
    mutating func socketWritable() -> Writable {
        guard !isWriting else { return .busy }
        awaitsWritable = false
        guard !waiting.isEmpty else { return .idle }
        var bytes: [UInt8] = []
        swap(&bytes, &waiting)
        isWriting = true
        held = bytes.count
        return .write(bytes)
    }

    /// The socket is about to close: what waits is dropped. False when a writer is still at work: the
    /// close must then wait for it (it is told by `wrote`'s `closeSocket`).
    mutating func close() -> Bool {
        guard !isWriting else {
            closesAfterWrite = true
            return false
        }
        waiting = []
        awaitsWritable = false
        return true
    }
}
