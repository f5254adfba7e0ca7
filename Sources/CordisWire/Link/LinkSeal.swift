/// A link's first step out, as a pure value: the sending half of the session its handshake agreed (the
/// frame limit, and on an authenticated link the sequence numbers and key). Every message sent from then
/// on is framed and sealed by it, all or nothing, and nothing after the last message (a `goodbye`). A
/// send it refuses spends no sequence number, so the link goes on. Its output is framed bytes for the
/// connection's `CodecChain` (the stream filter) and write queue; `LinkSealTests` tests it without a
/// socket.
///
/// `Link` holds it under its own lock, not the connection's: the loop thread that reads the socket never
/// waits for a message to be encoded, and a sealed message is put in line before the lock is let go, so
/// sequence numbers follow the byte stream.
package struct LinkSeal: Sendable {
    /// The session sends are sealed with: nil before a handshake installs it and after the last
    /// message.
    package private(set) var session: SessionCodec?

    /// A seal with no session yet.
    package init() {}

    /// Installs the session every message sent from now on is sealed with.
    package mutating func establish(_ session: SessionCodec) {
        self.session = session
    }

    /// `message` as one sealed frame: nil when there is no session (the link is not established, or
    /// its last message went). With `last`, the session ends after it, so nothing is sealed after
    /// it. The result is framed, not yet through the stream filter (`CodecChain.outbound(_:)`).
    ///
    /// - Throws: `tooLarge` when the frame is over the frame limit or more than `limit` bytes. Nothing
    ///   is sealed then: the sequence numbers are unspent, so the link goes on.
    package mutating func seal(_ message: WireMessage, last: Bool = false, limit: Int) throws(TransportError) -> [UInt8]? {
        guard let mark = session?.sealMark else { return nil }
        var framed: [UInt8] = []
        // Room for a call or an answer of a few fields, so the frame is not regrown as it is written.
        framed.reserveCapacity(256)
        do throws(WireError) {
            // Sealed in place: the session is neither copied nor its keys retained.
            try session?.append(message, to: &framed)
        } catch {
            session?.rewind(to: mark)
            throw TransportError(.tooLarge, "cannot send \(message.type): \(error.message)")
        }
        return try settle(framed, last: last, limit: limit, mark: mark)
    }

    /// `event` as one sealed frame per subscription in `ids` (its copies differ only in their id), all
    /// or nothing. Nil and errors as `seal(_:last:limit:)`.
    package mutating func seal(_ event: SharedEvent, ids: [Int], limit: Int) throws(TransportError) -> [UInt8]? {
        guard let mark = session?.sealMark else { return nil }
        var framed: [UInt8] = []
        do throws(WireError) {
            for id in ids { try session?.append(event, id: id, to: &framed) }
        } catch {
            session?.rewind(to: mark)
            throw TransportError(.tooLarge, "cannot send event: \(error.message)")
        }
        return try settle(framed, last: false, limit: limit, mark: mark)
    }

    /// Hands on frames sealed since `mark` when they fit `limit`, ending the session after the last
    /// message; otherwise takes them back (their sequence numbers unspent) and refuses them.
    private mutating func settle(_ framed: [UInt8], last: Bool, limit: Int, mark: Int) throws(TransportError) -> [UInt8] {
        guard framed.count <= limit else {
            session?.rewind(to: mark)
            throw TransportError(.tooLarge, "\(framed.count) bytes are more than the outbound limit of \(limit) bytes")
        }
        if last { session = nil }
        return framed
    }
}
