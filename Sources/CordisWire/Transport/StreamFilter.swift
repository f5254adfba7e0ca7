/// A transformation of a connection's byte stream between the socket and the frame codec: the one
/// place where an encryption layer (TLS on memory buffers) sits.
///
/// Inbound, the bytes read from the socket go through `inbound(_:)` before the frame decoder sees
/// them; outbound, the framed bytes of every send go through `outbound(_:)`, in send order, before
/// they are written. Both run under the connection's lock (never a syscall there: the filter only
/// transforms bytes), inbound on the loop thread, outbound on the sender's thread. Install it with
/// `Connection.setStreamFilter(_:)` before the first byte is sent or read; bytes the filter must send
/// on its own initiative (a handshake's first flight) go out with `Connection.stage(_:raw: true)` and
/// `Connection.write(_:)`, which keeps them in line with every other send.
package protocol StreamFilter: AnyObject, Sendable {
    /// Bytes read from the socket: returns the bytes for the frame decoder (possibly none yet) and
    /// bytes to write back to the peer at once (a handshake's answer, possibly none).
    func inbound(_ bytes: UnsafeRawBufferPointer) throws(TransportError) -> (plain: [UInt8], reply: [UInt8])
    /// Framed bytes to send: returns the bytes to write to the socket.
    func outbound(_ framed: [UInt8]) throws(TransportError) -> [UInt8]
    /// What to send, as it is, before the connection closes once `inbound` threw (a TLS alert, a
    /// plain refusal); possibly nothing. Taken once.
    func takeLastWords() -> [UInt8]
}

extension StreamFilter {
    /// No last words: a filter that has nothing to say before the close.
    package func takeLastWords() -> [UInt8] { [] }
}
