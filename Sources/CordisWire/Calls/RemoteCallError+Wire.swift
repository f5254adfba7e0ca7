/// The transport re-exports the one error type of remote calls (shared with the runtime), so a client
/// turns an `error` answer into the same `RemoteCallError` a proxy throws.
@_exported import CordisCalls

/// A remote call's failure as it travels in an `error` reply.
///
/// The transport itself produces `withdrawn` (the link closed), `timeout` (no answer in time),
/// `overloaded` (too many calls in flight), `cancelled` (the caller gave up), `duplicate-call` and
/// `too-large`; a provider's own failures arrive under whatever code its reply carries.
extension RemoteCallError {
    /// The failure an `error` reply describes.
    public init(_ reply: RemoteError) {
        self.init(Code(rawValue: reply.code), reply.message)
    }

    /// The `error` reply that tells the caller of call `id` about this failure.
    public func reply(to id: Int) -> WireMessage {
        .error(RemoteError(id: id, code: code.rawValue, message: message))
    }
}
