import CordisWire

/// What makes the node's links, each task with its owner: the listeners and an accept loop per listener
/// (ends when the listener closes; the handshakes of its connections run on the event loop, no task of
/// their own), and a dialler per address (ends on `stopDialling` or at stop). Links own their readers and
/// heartbeats.
struct Linking {
    /// The sockets the node listens on.
    var listeners: [Listener] = []
    /// One accept loop per listener.
    var acceptors: [Task<Void, Never>] = []
    /// One dialler per address the discovery asked to keep dialled.
    var diallers: [String: Task<Void, Never>] = [:]

    /// Closes every listener (the accept loops end with them); their addresses stay listed.
    func closeListeners() {
        for listener in listeners { listener.close() }
    }

    /// Closes every listener and forgets it (a start that failed).
    mutating func discardListeners() {
        closeListeners()
        listeners.removeAll()
    }

    /// Cancels every task and forgets it (the node stops, its listeners closed).
    mutating func cancelTasks() {
        for task in acceptors { task.cancel() }
        for task in diallers.values { task.cancel() }
        acceptors.removeAll()
        diallers.removeAll()
    }
}
