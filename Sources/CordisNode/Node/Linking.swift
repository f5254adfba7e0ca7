import CordisWire

/// What makes the node's links, each task with its owner: the listeners and an accept loop per listener
/// (ends when the listener closes; the handshakes of its connections run on the event loop, no task of
/// their own), and a task per dial on its way (ends with its dial, or at stop). Which addresses are
/// dialled, and when, is `NodeState`'s to say. Links own their readers and heartbeats.
struct Linking {
    /// The sockets the node listens on.
    var listeners: [Listener] = []
    /// One accept loop per listener.
    var acceptors: [Task<Void, Never>] = []
    /// The dials on their way, by attempt.
    var dials: [Int: Task<Void, Never>] = [:]
    /// The links dialled whose handshake is done, by attempt, until `NodeState` says to take or close them.
    var dialled: [Int: Link] = [:]

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
        for task in dials.values { task.cancel() }
        for link in dialled.values { link.close(reason: "the node stopped") }
        acceptors.removeAll()
        dials.removeAll()
        dialled.removeAll()
    }
}
