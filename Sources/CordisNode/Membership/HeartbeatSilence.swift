/// How long the peer of a link has been silent while this node ran, measured at each heartbeat: the one
/// rule that says when a link stopped answering (`isSilent`).
///
/// A gap between two beats counts at most `longestGap` (two heartbeat intervals): a longer gap is this
/// node not running (stopped, starved, its actor busy), with no pings sent for the peer to answer, and
/// must not count against the peer. A value with no clock: the times come in with each beat.
struct HeartbeatSilence: Equatable, Sendable {
    /// The most silence one gap between two beats adds.
    let longestGap: Duration
    /// How much silence makes the link silent.
    let timeout: Duration
    /// When the last beat ran.
    private(set) var lastBeat: ContinuousClock.Instant
    /// The last frame from the peer the beats saw.
    private(set) var lastHeardSeen: ContinuousClock.Instant
    /// How long the peer has been silent while this node ran.
    private(set) var silence: Duration

    /// Starts measuring at `now`, the peer last heard at `heard` (its handshake): the time between the two
    /// (the link waiting to be taken into use) counts at most as one gap.
    init(now: ContinuousClock.Instant, heard: ContinuousClock.Instant, interval: Duration, timeout: Duration) {
        longestGap = interval * 2
        self.timeout = timeout
        lastBeat = now
        lastHeardSeen = heard
        silence = min(now - heard, longestGap)
    }

    /// A heartbeat at `now`, the peer last heard at `heard`: true when the link is now silent (the peer
    /// was silent for longer than the timeout while this node ran).
    mutating func beat(now: ContinuousClock.Instant, heard: ContinuousClock.Instant) -> Bool {
        if heard > lastHeardSeen {
            // Heard since the last beat: silent only since then.
            lastHeardSeen = heard
            silence = min(now - heard, longestGap)
        } else {
            silence += min(now - lastBeat, longestGap)
        }
        lastBeat = now
        return isSilent
    }

    /// Whether the peer was silent for longer than the timeout.
    var isSilent: Bool { silence > timeout }
}
