import CordisControl

/// Where a follower of the cluster's events (`events --follow`, `watch`) resumes after it reconnected.
///
/// The control protocol numbers no events, so the follower keeps, per node, the time of the last event
/// it printed and the events it printed at that very time. After a reconnection it subscribes with the
/// nodes' history (each node keeps its last 256 events) and prints only the events that came after:
/// nothing already printed is printed again, and what happened during the gap is printed, as far as
/// the history reaches back.
struct EventResume: Sendable {
    /// Per node: the time of the last event seen, and the events seen at that time.
    private var latest: [String: (time: Double, records: Set<EventRecord>)] = [:]

    /// A follower that has seen nothing yet.
    init() {}

    /// A live event was printed: the resume point moves on to it (whatever its time: a live event is
    /// always printed).
    mutating func saw(_ record: EventRecord) {
        if let last = latest[record.node], last.time == record.time {
            latest[record.node]?.records.insert(record)
        } else if (latest[record.node]?.time ?? -.infinity) < record.time {
            latest[record.node] = (record.time, [record])
        }
    }

    /// The events of a history (oldest first) not seen yet, in order; they count as seen from now.
    mutating func unseen(_ history: [EventRecord]) -> [EventRecord] {
        history.filter { record in
            if let last = latest[record.node] {
                if record.time < last.time { return false }
                if record.time == last.time, last.records.contains(record) { return false }
            }
            saw(record)
            return true
        }
    }
}
