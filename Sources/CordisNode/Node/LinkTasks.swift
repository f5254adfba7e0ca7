/// The node's long-lived link work, each task with its owner: an accept loop per listener (ends when the
/// listener closes), a dialler per address (ends on `stopDialling` or at stop), the handshake of each
/// accepted connection (ends with the handshake). Links own their readers and heartbeats.
struct LinkTasks {
    /// One accept loop per listener.
    var acceptors: [Task<Void, Never>] = []
    /// One dialler per address the discovery asked to keep dialled.
    var diallers: [String: Task<Void, Never>] = [:]
    /// The handshake of each accepted connection, by a number of its own.
    var handshakes: [Int: Task<Void, Never>] = [:]
    /// The number of the latest handshake.
    var lastHandshake = 0

    /// Cancels every task and forgets it (the node stops).
    mutating func cancelAll() {
        for task in acceptors { task.cancel() }
        for task in diallers.values { task.cancel() }
        for task in handshakes.values { task.cancel() }
        acceptors.removeAll()
        diallers.removeAll()
        handshakes.removeAll()
    }
}
