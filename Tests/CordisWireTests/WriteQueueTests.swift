import Testing
@testable import CordisWire

/// A connection's write queue, tested as a value: who writes, in what order, and when a close may go
/// ahead, with no socket.
@Suite("The write queue")
struct WriteQueueTests {
    private static func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

    /// Expects `got` to be `expected`: a plain call, so `got` may come from a mutating method.
    private func check<Value: Equatable>(
        _ got: Value, _ expected: Value, _ comment: Comment? = nil, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        #expect(got == expected, comment, sourceLocation: sourceLocation)
    }

    @Test("the first sender claims its bytes; later ones wait behind it, in order, and the writer takes them")
    func claimThenQueue() {
        var queue = WriteQueue()
        check(queue.stage(Self.bytes("ab"), limit: 100), .claimed(Self.bytes("ab")))
        #expect(queue.isWriting)
        check(queue.stage(Self.bytes("cd"), limit: 100), .queued)
        check(queue.stage(Self.bytes("e"), limit: 100), .queued)
        #expect(queue.pending == 5)
        check(queue.wrote(Self.bytes("ab"), upTo: 2, calls: 1, failed: false, aborting: false), .more(Self.bytes("cde")))
        #expect(queue.pending == 3, "the writer holds what it took")
        check(queue.wrote(Self.bytes("cde"), upTo: 3, calls: 2, failed: false, aborting: false), .done(closeSocket: false))
        #expect(!queue.isWriting)
        #expect(queue.pending == 0)
        #expect(queue.sendCalls == 3)
        check(queue.stage(Self.bytes("f"), limit: 100), .claimed(Self.bytes("f")), "the next sender writes again")
    }

    @Test("bytes over the limit behind a writer are refused and nothing is staged; a last word passes")
    func limit() {
        var queue = WriteQueue()
        _ = queue.stage(Array(repeating: 1, count: 60), limit: 100)
        check(queue.stage(Array(repeating: 2, count: 30), limit: 100), .queued)
        check(queue.stage(Array(repeating: 3, count: 11), limit: 100), .overLimit(pending: 101))
        #expect(queue.pending == 90)
        check(queue.stage(Array(repeating: 4, count: 11), limit: nil), .queued)
        #expect(queue.pending == 101)
    }

    @Test("a full socket leaves the rest first in line for the loop, which writes it once writable")
    func fullSocket() {
        var queue = WriteQueue()
        _ = queue.stage(Self.bytes("abcdef"), limit: 100)
        check(queue.stage(Self.bytes("gh"), limit: 100), .queued)
        check(queue.wrote(Self.bytes("abcdef"), upTo: 4, calls: 2, failed: false, aborting: false), .awaitWritable)
        #expect(queue.awaitsWritable)
        #expect(!queue.isWriting)
        check(queue.stage(Self.bytes("i"), limit: 100), .queued, "no sender writes while the socket is full")
        check(queue.socketWritable(), .write(Self.bytes("efghi")))
        #expect(!queue.awaitsWritable)
        check(queue.socketWritable(), .busy, "the loop is the writer now")
        check(queue.wrote(Self.bytes("efghi"), upTo: 5, calls: 1, failed: false, aborting: false), .done(closeSocket: false))
        check(queue.socketWritable(), .idle)
    }

    @Test("a deferred claim goes first, with what was staged behind it, at the end of the loop's turn")
    func deferred() {
        var queue = WriteQueue()
        _ = queue.stage(Self.bytes("ab"), limit: 100)
        queue.deferClaim(Self.bytes("ab"))
        check(queue.stage(Self.bytes("cd"), limit: 100), .queued)
        check(queue.takeDeferred(dropping: false), Self.bytes("abcd"))
        #expect(queue.pending == 4)
        check(queue.wrote(Self.bytes("abcd"), upTo: 4, calls: 1, failed: false, aborting: false), .done(closeSocket: false))
        check(queue.takeDeferred(dropping: false), nil, "no writer, nothing deferred")

        var aborted = WriteQueue()
        _ = aborted.stage(Self.bytes("ab"), limit: 100)
        aborted.deferClaim(Self.bytes("ab"))
        check(aborted.takeDeferred(dropping: true), [], "an aborted connection writes nothing, but the write still ends")
        check(aborted.wrote([], upTo: 0, calls: 0, failed: false, aborting: true), .done(closeSocket: false))
    }

    @Test("a close waits for the writer at work, which is told to close the socket when it is done")
    func closeWaitsForWriter() {
        var queue = WriteQueue()
        _ = queue.stage(Self.bytes("ab"), limit: 100)
        _ = queue.stage(Self.bytes("cd"), limit: 100)
        check(queue.close(), false)
        check(queue.wrote(Self.bytes("ab"), upTo: 2, calls: 1, failed: false, aborting: true), .done(closeSocket: true),
              "an aborting connection does not write what waits")
        check(queue.close(), true)
        #expect(queue.pending == 0)
        #expect(!queue.awaitsWritable)
    }

    @Test("a failed socket ends the write, whatever waits")
    func failure() {
        var queue = WriteQueue()
        _ = queue.stage(Self.bytes("ab"), limit: 100)
        _ = queue.stage(Self.bytes("cd"), limit: 100)
        check(queue.wrote(Self.bytes("ab"), upTo: 1, calls: 1, failed: true, aborting: false), .done(closeSocket: false))
        #expect(!queue.isWriting)
        #expect(!queue.awaitsWritable)
    }
}
