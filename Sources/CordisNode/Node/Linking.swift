import CordisWire

/// What makes the node's links, each task with its owner: the listeners and an accept loop per listener
/// (ends when the listener closes), the handshake of each accepted connection (ends with the handshake),
/// a dialler per address (ends on `stopDialling` or at stop). Links own their readers and heartbeats.
/// The members' lives it keeps are what a handshake reads off the actor.
struct Linking {
    /// The sockets the node listens on.
    var listeners: [Listener] = []
    /// One accept loop per listener.
    var acceptors: [Task<Void, Never>] = []
    /// One dialler per address the discovery asked to keep dialled.
    var diallers: [String: Task<Void, Never>] = [:]
    /// The handshake of each accepted connection, by a number of its own.
    var handshakes: [Int: Task<Void, Never>] = [:]
    /// The number of the latest handshake.
    var lastHandshake = 0
    /// The lives of the linked members, for the handshake's early refusal of a name (read off the actor).
    let liveMembers = LiveMembers()

    /// Closes every listener (the accept loops end with them); their addresses stay listed.
    func closeListeners() {
        for listener in listeners { listener.close() }
    }

    /// Closes every listener and forgets it (a start that failed).
    mutating func discardListeners() {
        closeListeners()
        listeners.removeAll()
    }

    /// Closes the listeners, cancels every task and forgets it (the node stops).
    mutating func stop() {
        closeListeners()
        for task in acceptors { task.cancel() }
        for task in diallers.values { task.cancel() }
        for task in handshakes.values { task.cancel() }
        acceptors.removeAll()
        diallers.removeAll()
        handshakes.removeAll()
    }
}
