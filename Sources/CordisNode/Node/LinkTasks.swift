/// The node's long-lived link work, each task with its owner: an accept loop per listener (ends when the
/// listener closes; the handshakes of its connections are tasks of its own group), a dialler per address
/// (ends on `stopDialling` or at stop). Links own their readers and heartbeats.
struct LinkTasks {
    /// One accept loop per listener.
    var acceptors: [Task<Void, Never>] = []
    /// One dialler per address the discovery asked to keep dialled.
    var diallers: [String: Task<Void, Never>] = [:]

    /// Cancels every task and forgets it (the node stops).
    mutating func cancelAll() {
        for task in acceptors { task.cancel() }
        for task in diallers.values { task.cancel() }
        acceptors.removeAll()
        diallers.removeAll()
    }
}
