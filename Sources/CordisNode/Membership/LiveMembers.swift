import Synchronization

/// The incarnation of each member with a link up, readable from any thread: the handshake asks it
/// for its early refusal of a name held by a live member (admission is decided again, on the actor,
/// when the link is adopted).
final class LiveMembers: Sendable {
    private let table = Mutex<[String: String]>([:])

    /// The incarnation of the linked member `name`, if any.
    func incarnation(of name: String) -> String? { table.withLock { $0[name] } }

    /// Records (or, with nil, forgets) the linked life of `name`.
    func set(_ name: String, _ incarnation: String?) { table.withLock { $0[name] = incarnation } }
}
