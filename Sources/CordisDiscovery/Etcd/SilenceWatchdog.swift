import CordisWire
import Synchronization

/// Ends a stream that stays silent for longer than `limit`: each thing heard resets it; a whole
/// `limit` without any runs `onSilence` once, on the loop.
///
/// etcd sends nothing on a watch while nothing changes, and a member cut off from its peers, or a
/// connection whose other end vanished, looks the same from here: without this a watch could wait
/// forever and its keys' deletions would never arrive. Ending it makes the caller list again.
final class SilenceWatchdog: Sendable {
    private struct State {
        var heard = false
        var timer: UInt64?
        var stopped = false
        var fired = false
    }

    /// The longest silence allowed.
    let limit: Duration
    private let loop: EventLoop
    private let onSilence: @Sendable () -> Void
    private let state = Mutex(State())

    /// Starts watching: `onSilence` runs if nothing is heard for `limit`.
    init(limit: Duration, on loop: EventLoop, onSilence: @escaping @Sendable () -> Void) {
        self.limit = limit
        self.loop = loop
        self.onSilence = onSilence
        arm()
    }

    /// Whether the silence ended the stream.
    var fired: Bool { state.withLock { $0.fired } }

    /// Something arrived.
    func heard() {
        state.withLock { $0.heard = true }
    }

    /// Stops watching (the stream ended another way).
    func stop() {
        let timer = state.withLock { state -> UInt64? in
            state.stopped = true
            defer { state.timer = nil }
            return state.timer
        }
        if let timer { loop.cancelTimer(timer) }
    }

    private func arm() {
        let id = loop.schedule(after: limit) { [weak self] in self?.check() }
        let late = state.withLock { state -> Bool in
            guard !state.stopped else { return true }
            state.timer = id
            return false
        }
        if late { loop.cancelTimer(id) }
    }

    private func check() {
        let silent = state.withLock { state -> Bool? in
            guard !state.stopped else { return nil }
            state.timer = nil
            if state.heard {
                state.heard = false
                return false
            }
            state.fired = true
            state.stopped = true
            return true
        }
        switch silent {
        case true?: onSilence()
        case false?: arm()
        case nil: break
        }
    }
}
